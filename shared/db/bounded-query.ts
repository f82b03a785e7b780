/**
 * Filtered listings under a read budget (README "Decisions", bounded reads). A FilterExpression is applied after
 * DynamoDB has read an entry: a filter that matches little would otherwise make a listing read on through the
 * whole timeline to fill its page, so that its cost grows with the log rather than with the page. Instead a call
 * examines at most a fixed budget of entries — `FILTER_BUDGET_FACTOR` × the page size, and never more than about
 * 1 MB (DynamoDB's own page) — and then answers what it found, possibly a short or empty page, with a cursor just
 * after the last entry it examined.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Item } from './batch';
import { TABLE_NAME, db } from './client';
import type { QuerySpec } from './query';

/** A filtered listing examines at most this many entries per entry of its page. */
export const FILTER_BUDGET_FACTOR = 5;

/** Entries a filtered listing of `pageSize` may examine in one call. */
export const filterBudget = (pageSize: number) => FILTER_BUDGET_FACTOR * pageSize;

/** DynamoDB ends a Query page after 1 MB of reads; a filtered listing reads no more than that in one call. */
const MAX_READ_BYTES = 1024 * 1024;

/**
 * Fewest entries one Query asks for, so that a selective filter does not cost one round trip per few matches
 * (at most this many entries are read past the page; they are read again by the next page).
 */
const MIN_READ = 100;

export interface FilteredRead {
  /** The matching items in query order; may hold more than `want` (the caller cuts its page). */
  items: Item[];
  /**
   * The key of the last entry examined, when the read stopped before the end of the query (enough matches, the
   * budget or the byte cap). Absent when the query was read to its end.
   */
  lastExamined?: Record<string, unknown>;
}

/**
 * Reads `input`, which carries a FilterExpression, from after `start` until `want` items matched, `budget`
 * entries were examined, about 1 MB was read, or the query ended. Each Query asks for as many entries as the
 * match rate seen so far predicts the rest needs (at least MIN_READ, at most what is left of the budget and of the
 * bytes). The byte count comes from ConsumedCapacity (requested on every call; a read unit is 4 KB, 8 KB when
 * eventually consistent); where none is reported, a Query that DynamoDB ended at its own 1 MB page still ends the
 * read. Throws what the DynamoDB client throws.
 */
export async function queryFiltered(
  input: QuerySpec & { FilterExpression: string },
  options: { want: number; budget: number; start?: Record<string, unknown> },
): Promise<FilteredRead> {
  const bytesPerUnit = input.ConsistentRead === true ? 4096 : 8192;
  const items: Item[] = [];
  let examined = 0;
  let bytes = 0;
  let start = options.start;
  for (;;) {
    const limit = nextLimit({ wanted: options.want - items.length, matched: items.length, examined, bytes, left: options.budget - examined });
    const page = await db.send(
      new QueryCommand({ ...input, TableName: TABLE_NAME, ExclusiveStartKey: start, Limit: limit, ReturnConsumedCapacity: 'TOTAL' }),
    );
    const scanned = page.ScannedCount ?? 0;
    examined += scanned;
    bytes += (page.ConsumedCapacity?.CapacityUnits ?? 0) * bytesPerUnit;
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
    if (start === undefined) return { items };
    // A page that ends before its Limit with more to read was ended by DynamoDB at 1 MB.
    const endedAtPageLimit = scanned < limit;
    if (items.length >= options.want || examined >= options.budget || bytes >= MAX_READ_BYTES || endedAtPageLimit) {
      return { items, lastExamined: start };
    }
  }
}

/** The Limit of the next Query of queryFiltered (see there); always at least 1. */
function nextLimit(read: { wanted: number; matched: number; examined: number; bytes: number; left: number }): number {
  const { wanted, matched, examined, bytes, left } = read;
  // Nothing read yet: the page's worth. Nothing matched yet: no rate to go by, so the rest of the budget.
  const predicted = examined === 0 ? wanted : matched === 0 ? left : Math.ceil(((wanted * examined) / matched) * 1.25);
  let limit = Math.min(left, Math.max(MIN_READ, predicted));
  // Stay within the bytes left, at the average entry size so far.
  if (bytes > 0) limit = Math.min(limit, Math.floor(((MAX_READ_BYTES - bytes) * examined) / bytes));
  return Math.max(1, limit);
}
