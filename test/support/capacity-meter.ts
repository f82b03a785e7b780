/**
 * A meter of DynamoDB consumed capacity, for the benchmarks and for connected tests that hold a listing's cost:
 * it asks for ReturnConsumedCapacity on every data-plane command sent through a client and sums what comes back.
 * Capacity is what DynamoDB would bill for the same calls (DynamoDB Local reports it too), unlike latency.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface Capacity {
  read: number;
  write: number;
  calls: number;
}

const READS = new Set([
  'GetItemCommand',
  'BatchGetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'TransactGetItemsCommand',
]);
const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

interface ConsumedCapacityEntry {
  CapacityUnits?: number;
}

/**
 * DynamoDB Local reports 4 units for any TransactWriteItems call, whatever its size. DynamoDB charges 2 write
 * units per item per KB: estimate that from the request (updates, deletes and checks counted as one KB).
 */
export function transactionWriteUnits(input: unknown): number {
  const items = (input as { TransactItems?: Array<{ Put?: { Item?: unknown } }> }).TransactItems ?? [];
  return items.reduce(
    (sum, item) => sum + 2 * Math.max(1, Math.ceil(approximateBytes(item.Put?.Item ?? {}) / 1024)),
    0,
  );
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

const NAME = 'capacityMeter';

export class CapacityMeter {
  private totals: Capacity = { read: 0, write: 0, calls: 0 };
  private client: DynamoDBClient | undefined;
  private lastCallAt = 0;

  /** Meters `client` from now on (once: attaching it again changes nothing). */
  attach(client: DynamoDBClient): void {
    if (this.client === client) return;
    this.detach();
    this.client = client;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        // Table commands (create, delete, describe) have no such parameter: they pass through unmetered.
        if (!READS.has(command) && !WRITES.has(command)) return next(args);
        const input = args.input as { ReturnConsumedCapacity?: string };
        input.ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacityEntry | ConsumedCapacityEntry[] })
          .ConsumedCapacity;
        const reported = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
          (sum, c) => sum + (c.CapacityUnits ?? 0),
          0,
        );
        const units = command === 'TransactWriteItemsCommand' ? transactionWriteUnits(args.input) : reported;
        if (READS.has(command)) this.totals.read += units;
        else this.totals.write += units;
        this.totals.calls += 1;
        this.lastCallAt = Date.now();
        return result;
      },
      { step: 'initialize', name: NAME },
    );
  }

  /** Takes the meter off its client again. */
  detach(): void {
    this.client?.middlewareStack.remove(NAME);
    this.client = undefined;
  }

  /**
   * Waits until no metered call has been made for `ms` (at most 60 s): the stream workers a request woke have
   * finished, so the next measured call counts only its own reads and writes.
   */
  async quiet(ms = 1000): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() - this.lastCallAt < ms && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
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
      capacity: {
        read: this.totals.read - before.read,
        write: this.totals.write - before.write,
        calls: this.totals.calls - before.calls,
      },
    };
  }
}

/** Runs `work` with a meter on `client` for its duration alone: its result, time and capacity (CapacityMeter.measure). */
export async function measureCapacity<T>(client: DynamoDBClient, work: () => Promise<T>) {
  const meter = new CapacityMeter();
  meter.attach(client);
  try {
    return await meter.measure(work);
  } finally {
    meter.detach();
  }
}
