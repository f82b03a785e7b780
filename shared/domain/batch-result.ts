/**
 * Batch results (docs/api-spec.md common rule 4): `result.data` keyed by item id, each `{success, message, ...}`; the
 * overall status stays success when single items fail. A write that stops part way answers per item too: the
 * items written `success: true`, the others `notWritten` with the reason, never a success for an item that is not
 * stored (docs/api.md "Partial failures").
 */
import { PartialWriteError } from '../db/partial-write';
import { publicErrorOf } from '../core/errors';
import { logger } from '../core/logger';

export type ItemResult = { success: boolean; message: string } & Record<string, unknown>;

/** A batch keyed by item id; `I` names the fields its items carry (the operation's result schema checks them). */
export type BatchResult<I extends ItemResult = ItemResult> = Record<string, I>;

/** An item not done, with the reason and no other field (notWritten, or an item the operation refuses). */
export type ItemFailure = { success: false; message: string };

/** Builds the keyed result in the order of `ids`. */
export function batchResult<T, I extends ItemResult = ItemResult>(
  items: readonly T[],
  idOf: (item: T) => string,
  resultOf: (item: T) => I,
): BatchResult<I> {
  const result: BatchResult<I> = {};
  for (const item of items) result[idOf(item)] = resultOf(item);
  return result;
}

/** The result of an item left unwritten because `failure` stopped the request part way. */
export function notWritten(failure: unknown): ItemFailure {
  return { success: false, message: `Not written, the request stopped part way: ${publicErrorOf(failure).message}` };
}

/** Which parts (by index) a write in several steps stored, and what stopped it when it did not finish. */
export interface WriteReport {
  written(index: number): boolean;
  failure?: unknown;
}

/**
 * Waits for a write in several steps: all parts written when it finishes; when it stops part way
 * (PartialWriteError), the parts it names, with the failure logged. Any other error means nothing was written and
 * is thrown.
 */
export async function reportOf(write: Promise<void>): Promise<WriteReport> {
  try {
    await write;
    return { written: () => true };
  } catch (error) {
    if (!(error instanceof PartialWriteError)) throw error;
    logger.error('a write stopped part way', { partsWritten: error.committed.size, cause: String(error.cause) });
    return { written: (index) => error.committed.has(index), failure: error.cause };
  }
}

/**
 * Runs `write` for every item at once and answers each (keyed by `idOf`) with what its write returned, or
 * notWritten when it threw. When every write threw, nothing was written: the first error is thrown, so the
 * request fails as a whole.
 */
export async function settleEach<T, I extends ItemResult = ItemResult>(
  items: readonly T[],
  idOf: (item: T) => string,
  write: (item: T) => Promise<I>,
): Promise<BatchResult<I | ItemFailure>> {
  const settled = await Promise.allSettled(items.map(write));
  const failures = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
  if (failures.length > 0 && failures.length === settled.length) throw failures[0];
  if (failures.length > 0)
    logger.error('a write stopped part way', { itemsFailed: failures.length, cause: String(failures[0]) });
  const results = settled.map((outcome) =>
    outcome.status === 'fulfilled' ? outcome.value : notWritten(outcome.reason),
  );
  return batchResult(
    items.map((item, i) => ({ item, result: results[i] })),
    ({ item }) => idOf(item),
    ({ result }) => result,
  );
}
