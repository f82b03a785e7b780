/**
 * What the service benchmarks share: the local stack in memory (DynamoDB Local + gateway, in this process so the
 * handlers' DynamoDB client can be metered), a capacity meter fed by ReturnConsumedCapacity on every call, a
 * tenant, and timing helpers. Figures are for DynamoDB Local on this machine: latency is indicative, consumed
 * capacity is what DynamoDB would bill for the same calls.
 */
// First: sets the environment the modules below read when they load.
import './environment';
import { randomUUID } from 'node:crypto';
import { startLocalStack, type LocalStack } from '../local/local-stack';
import { CapacityMeter } from '../test/support/capacity-meter';

export { CapacityMeter, type Capacity } from '../test/support/capacity-meter';

export interface BenchStack {
  stack: LocalStack;
  meter: CapacityMeter;
  post(path: string, data: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  newApiKey(): Promise<{ apiKeyId: string; headers: Record<string, string> }>;
  /** Turns the key's activity logs on (Add Activities' precondition); throws when the service refuses. */
  enableActivityLogs(headers: Record<string, string>): Promise<void>;
}

export async function startBenchStack(): Promise<BenchStack> {
  const stack = await startLocalStack({ inMemory: true, port: 0 });
  // Loaded after the stack set the environment: the same client module instance the handlers use.
  const { dynamodb } = await import('../shared/db/client');
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
    const tokens = await post(
      '/v2/workspace/authtokens/get',
      { apiKey: apiKeyId },
      { 'x-service-workspace-id': id, 'x-service-workspace-auth-token': authToken },
    );
    return {
      apiKeyId,
      headers: { 'x-service-api-key': apiKeyId, 'x-service-auth-token': tokens.body.result.data.authTokens[0].token },
    };
  };
  const enableActivityLogs = async (headers: Record<string, string>) => {
    const enabled = await post(
      '/v2/workspace/activityconfig/update',
      { activityServiceConfig: { isEnabled: true } },
      headers,
    );
    if (enabled.status !== 200) throw new Error(`enabling activity logs failed: ${JSON.stringify(enabled.body)}`);
  };
  return { stack, meter, post, newApiKey, enableActivityLogs };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median milliseconds of `runs` calls of `action` (awaited), after one unmeasured call. */
export async function medianMs(runs: number, action: () => unknown): Promise<number> {
  await action();
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    await action();
    times.push(performance.now() - started);
  }
  return median(times);
}

/** A measured operation: medians over its runs of latency, capacity and DynamoDB calls. */
export interface Row {
  operation: string;
  ms: number;
  read: number;
  write: number;
  calls: number;
}

/**
 * Medians of `runs` timed calls of `request(i)` with the capacity each consumed. Before each run, `prepare(i)` (not
 * timed), then, with `quietMs`, a wait for the stack's background writes to settle; `writeUnits` counts write units
 * where the meter's figure is not the one wanted (the difference over the run).
 */
export async function measuredRuns(
  bench: BenchStack,
  operation: string,
  runs: number,
  request: (i: number) => Promise<unknown>,
  options: { prepare?: (i: number) => unknown; quietMs?: number; writeUnits?: () => number } = {},
): Promise<Row> {
  const samples: Row[] = [];
  for (let i = 0; i < runs; i += 1) {
    await options.prepare?.(i);
    if (options.quietMs !== undefined) await bench.meter.quiet(options.quietMs);
    const unitsBefore = options.writeUnits?.();
    const { ms, capacity } = await bench.meter.measure(() => request(i));
    const write = options.writeUnits === undefined ? capacity.write : options.writeUnits() - (unitsBefore ?? 0);
    samples.push({ operation, ms, read: capacity.read, write, calls: capacity.calls });
  }
  return {
    operation,
    ms: median(samples.map((s) => s.ms)),
    read: median(samples.map((s) => s.read)),
    write: median(samples.map((s) => s.write)),
    calls: median(samples.map((s) => s.calls)),
  };
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
