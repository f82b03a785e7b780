/**
 * Batched reads and writes within DynamoDB's limits: 100 keys per BatchGetItem, 25 requests per BatchWriteItem,
 * unprocessed keys and items retried with jittered backoff until done (or the attempts run out, which throws).
 */
import { coalesced } from '../core/coalesce';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type BatchGetCommandOutput,
  type BatchWriteCommandInput,
  type BatchWriteCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { PartialWriteError } from './partial-write';

export type ItemKey = { pk: string; sk: string };
export type Item = Record<string, unknown>;
export type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

const MAX_GET = 100;
const MAX_WRITE = 25;
const MAX_ATTEMPTS = 8;

const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(1000, 20 * 2 ** attempt)));

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/** Reads the items at `keys` (any number; chunks run in parallel). Missing items are simply absent. */
export async function batchGet(keys: readonly ItemKey[], options: { consistent?: boolean } = {}): Promise<Item[]> {
  const unique = [...new Map(keys.map((k) => [`${k.pk}\u0000${k.sk}`, k])).values()];
  const pages = await Promise.all(
    chunks(unique, MAX_GET).map(async (chunk) => {
      const found: Item[] = [];
      let pending: Record<string, unknown>[] | undefined = chunk;
      for (let attempt = 0; pending && pending.length > 0; attempt += 1) {
        if (attempt >= MAX_ATTEMPTS) throw new Error('BatchGetItem left keys unprocessed after retries.');
        if (attempt > 0) await backoff(attempt);
        const result: BatchGetCommandOutput = await db.send(
          new BatchGetCommand({
            RequestItems: { [TABLE_NAME]: { Keys: pending, ConsistentRead: options.consistent ?? true } },
          }),
        );
        found.push(...(result.Responses?.[TABLE_NAME] ?? []));
        pending = result.UnprocessedKeys?.[TABLE_NAME]?.Keys;
      }
      return found;
    }),
  );
  return pages.flat();
}

/** Map from `pk\0sk` to item, for looking up what batchGet returned. */
export function byKey(items: readonly Item[]): Map<string, Item> {
  return new Map(items.map((item) => [`${String(item.pk)}\u0000${String(item.sk)}`, item]));
}

/** The key of a stored item. */
export const keyOfItem = (item: Item): ItemKey => ({ pk: String(item.pk), sk: String(item.sk) });

export function keyString(key: ItemKey): string {
  return `${key.pk}\u0000${key.sk}`;
}

/** Writes each chunk of 25 (in parallel), retrying unprocessed items; reports which requests stayed unwritten and why. */
async function writeChunks(requests: readonly WriteRequest[]): Promise<{ unwritten: Set<number>; failure?: unknown }> {
  const unwritten = new Set<number>();
  let failure: unknown;
  const indexes = requests.map((_, i) => i);
  await Promise.all(
    chunks(indexes, MAX_WRITE).map(async (chunk) => {
      let pending = chunk;
      try {
        for (let attempt = 0; pending.length > 0; attempt += 1) {
          if (attempt >= MAX_ATTEMPTS) throw new Error('BatchWriteItem left items unprocessed after retries.');
          if (attempt > 0) await backoff(attempt);
          const sent = pending.map((i) => requests[i]);
          const result: BatchWriteCommandOutput = await db.send(
            new BatchWriteCommand({ RequestItems: { [TABLE_NAME]: sent } }),
          );
          const unprocessed = new Set((result.UnprocessedItems?.[TABLE_NAME] ?? []).map(requestKey));
          pending = pending.filter((i) => unprocessed.has(requestKey(requests[i])));
        }
      } catch (error) {
        failure ??= error;
        for (const i of pending) unwritten.add(i);
      }
    }),
  );
  return { unwritten, failure };
}

/** What tells requests of one batch apart (a batch may not name one key twice). */
function requestKey(request: WriteRequest): string {
  const key = request.PutRequest?.Item ?? request.DeleteRequest?.Key ?? {};
  return `${String(key.pk)}\u0000${String(key.sk)}`;
}

/** Writes `requests` (puts and deletes, any number) in chunks of 25, in parallel, retrying unprocessed ones. */
export async function batchWrite(requests: readonly WriteRequest[]): Promise<void> {
  const { failure, unwritten } = await writeChunks(requests);
  if (unwritten.size > 0) throw failure;
}

/**
 * Writes `requests` as batchWrite does, for callers that answer per request (BatchWriteItem is not atomic across
 * requests anyway). When some were written and others not, throws PartialWriteError naming the requests written
 * (by index); when none was, the failure itself.
 */
export async function batchWriteEach(requests: readonly WriteRequest[]): Promise<void> {
  const { failure, unwritten } = await writeChunks(requests);
  if (unwritten.size === 0) return;
  if (unwritten.size === requests.length) throw failure;
  throw new PartialWriteError(new Set(requests.flatMap((_, i) => (unwritten.has(i) ? [] : [i]))), failure);
}

export const putRequest = (item: Item): WriteRequest => ({ PutRequest: { Item: item } });
export const deleteRequest = (key: ItemKey): WriteRequest => ({ DeleteRequest: { Key: key } });

/**
 * Strongly consistent reads of a worker's side-by-side jobs, merged into one BatchGetItem (shared/core/coalesce.ts:
 * calls within 2 ms, at most 33 of them, so three keys each stay within one request): each caller gets the items
 * found among its own keys. For workers only; a request path would pay the wait for nothing.
 */
export const getTogether = coalesced(
  async (keyLists: readonly (readonly ItemKey[])[]): Promise<Item[][]> => {
    const found = byKey(await batchGet(keyLists.flat(), { consistent: true }));
    return keyLists.map((keys) =>
      keys.flatMap((itemKey): Item[] => {
        const item = found.get(keyString(itemKey));
        return item === undefined ? [] : [item];
      }),
    );
  },
  { windowMs: 2, maxBatch: 33 },
);
