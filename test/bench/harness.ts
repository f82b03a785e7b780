/**
 * What the service benchmarks share: the local stack in memory (DynamoDB Local + gateway, in this process so the
 * handlers' DynamoDB client can be metered), a capacity meter fed by ReturnConsumedCapacity on every call, a
 * tenant, and timing helpers. Figures are for DynamoDB Local on this machine: latency is indicative, consumed
 * capacity is what DynamoDB would bill for the same calls.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startLocalStack, type LocalStack } from '../../bin/lib/local-stack';

export interface Capacity {
  read: number;
  write: number;
  calls: number;
}

const READS = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'ScanCommand', 'TransactGetItemsCommand']);

interface ConsumedCapacityEntry {
  CapacityUnits?: number;
}

/**
 * DynamoDB Local reports 4 units for any TransactWriteItems call, whatever its size. DynamoDB charges 2 write
 * units per item per KB: estimate that from the request (updates, deletes and checks counted as one KB).
 */
function transactionWriteUnits(input: unknown): number {
  const items = (input as { TransactItems?: Array<{ Put?: { Item?: unknown } }> }).TransactItems ?? [];
  return items.reduce((sum, item) => sum + 2 * Math.max(1, Math.ceil(approximateBytes(item.Put?.Item ?? {}) / 1024)), 0);
}

/** Item size as DynamoDB counts it, near enough: binary values by their length, the rest as JSON text. */
function approximateBytes(value: unknown): number {
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + approximateBytes(v), 0);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).reduce((sum, [name, v]) => sum + name.length + approximateBytes(v), 0);
  }
  return JSON.stringify(value ?? null).length;
}

export class CapacityMeter {
  private totals: Capacity = { read: 0, write: 0, calls: 0 };

  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { ReturnConsumedCapacity?: string };
        input.ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacityEntry | ConsumedCapacityEntry[] }).ConsumedCapacity;
        const reported = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
        const units = context.commandName === 'TransactWriteItemsCommand' ? transactionWriteUnits(args.input) : reported;
        if (READS.has(context.commandName ?? '')) this.totals.read += units;
        else this.totals.write += units;
        this.totals.calls += 1;
        return result;
      },
      { step: 'initialize', name: 'benchCapacityMeter' },
    );
  }

  /** Runs `work` and returns its result with the capacity consumed meanwhile (run one measured call at a time). */
  async measure<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; capacity: Capacity }> {
    const before = { ...this.totals };
    const started = performance.now();
    const value = await work();
    const ms = performance.now() - started;
    return {
      value,
      ms,
      capacity: { read: this.totals.read - before.read, write: this.totals.write - before.write, calls: this.totals.calls - before.calls },
    };
  }
}

export interface BenchStack {
  stack: LocalStack;
  meter: CapacityMeter;
  post(path: string, data: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  newApiKey(): Promise<{ apiKeyId: string; headers: Record<string, string> }>;
}

export async function startBenchStack(): Promise<BenchStack> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  process.env.WORKSPACE_CREATE_LIMIT_PER_HOUR ??= '0';
  const stack = await startLocalStack({ inMemory: true, port: 0 });
  // Loaded after the stack set the environment: the same client module instance the handlers use.
  const { dynamodb } = await import('../../shared/db/client');
  const meter = new CapacityMeter();
  meter.attach(dynamodb);
  const post = async (path: string, data: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${stack.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ data }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const newApiKey = async () => {
    const created = await post('/v2/workspace/create', { ownerEmail: `bench-${randomUUID()}@example.com` });
    const { id, authToken, apiKeyList } = created.body.result.data;
    const apiKeyId = Object.keys(apiKeyList)[0];
    const tokens = await post('/v2/workspace/authtokens/get', { apiKey: apiKeyId }, { 'x-service-workspace-id': id, 'x-service-workspace-auth-token': authToken });
    return { apiKeyId, headers: { 'x-service-api-key': apiKeyId, 'x-service-auth-token': tokens.body.result.data.authTokens[0].token } };
  };
  return { stack, meter, post, newApiKey };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `tasks` with at most `concurrency` at a time. */
export async function pool<T>(tasks: Array<() => Promise<T>>, concurrency: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]();
      }
    }),
  );
  return results;
}
