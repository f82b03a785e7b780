/**
 * Queries shared by the entity modules: a partition read to its end (or to a cap), one raw page of a query with
 * its start key (the migration worker), and the pager of every listing.
 *
 * The pager (`readPage`) reads one partition of the table or of an index in sort-key order, forwards or
 * backwards, after a keyset cursor: the sort key of the entry the previous page ended on, as a key condition, so
 * a page costs the same wherever it is and its cursor stays valid when that entry is gone. It reads the page and
 * one entry more, to know whether another page follows, continuing past DynamoDB's 1 MB query pages.
 *
 * Bounded reads (docs/project-decisions.md). A filter applied after DynamoDB has read an entry (a FilterExpression, or a
 * check in code per candidate, `examinePage`) would otherwise make a listing read on through the whole timeline to
 * fill its page, so that its cost grows with the log rather than with the page. Instead a call examines at most a
 * fixed budget of entries — `FILTER_BUDGET_FACTOR` × the page size, and for a FilterExpression never more than
 * about 1 MB (DynamoDB's own page) — and then answers what it found, possibly a short or empty page, with a cursor
 * just after the last entry it examined, so the next page neither skips nor repeats an entry.
 *
 * Page tokens are not made here: a listing binds its cursor to the tenant and the query with
 * shared/db/page-token.ts (`readPageAfter`, `pageTokenAfter`), since the scope is the operation's.
 */
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { Item } from './batch';
import { TABLE_NAME, db } from './client';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY } from './table-definition';

/** What a query reads, without the table, the page size and the position (filled in by the helpers below). */
export type QuerySpec = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey' | 'Limit'>;

type Key = Record<string, unknown>;

/** What a read found, and where it stopped: absent when the query was read to its end. */
interface Read {
  items: Item[];
  /** The key of the last entry examined, when the read stopped before the end of the query. */
  lastExamined?: Key;
}

/**
 * Reads `input` from after `start` until `max` items, the end of the query, or `until` holds of the items read,
 * Query after Query (each asks for what is still missing).
 */
async function readUntil(
  input: QuerySpec,
  max: number,
  options: { start?: Key; until?: (items: readonly Item[]) => boolean } = {},
): Promise<Read> {
  const items: Item[] = [];
  let start = options.start;
  do {
    const limit = Number.isFinite(max) ? { Limit: max - items.length } : {};
    const page = await db.send(
      new QueryCommand({ ...input, ...limit, TableName: TABLE_NAME, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start && items.length < max && !(options.until?.(items) ?? false));
  return start === undefined ? { items } : { items, lastExamined: start };
}

/**
 * A Query read to its end, or to `max` items, page after page: for partitions whose size is bounded by design (a
 * user's grants), or reads the caller caps (the judgments of a scope).
 */
export async function queryAll(input: QuerySpec, max = Infinity): Promise<Item[]> {
  return (await readUntil(input, max)).items;
}

export interface QueryPage {
  items: Item[];
  /** Where the next page starts; absent when the query has been read to its end. */
  cursor?: Record<string, unknown>;
}

/**
 * At most `limit` items of the query after `cursor` (one Query call; fewer when DynamoDB's 1 MB page ends first):
 * for the migration worker, which moves what it reads, so only a start key can say where it stopped.
 */
export async function queryPage(input: QuerySpec, limit: number, cursor?: Record<string, unknown>): Promise<QueryPage> {
  const page = await db.send(
    new QueryCommand({ ...input, TableName: TABLE_NAME, ExclusiveStartKey: cursor, Limit: limit }),
  );
  return { items: page.Items ?? [], ...(page.LastEvaluatedKey === undefined ? {} : { cursor: page.LastEvaluatedKey }) };
}

/** A filtered listing examines at most this many entries per entry of its page. */
export const FILTER_BUDGET_FACTOR = 5;

/** Entries a filtered listing of `pageSize` may examine in one call. */
export const filterBudget = (pageSize: number) => FILTER_BUDGET_FACTOR * pageSize;

/** One page of a listing. */
export interface Page<T> {
  /** In the listing's order, at most the page size. */
  items: T[];
  /** The position the next page starts after; absent when the listing has been read to its end. */
  after?: string;
}

/**
 * The page with each item converted by `convert`. With `cursorOf`, the next page starts after what it picks from
 * the last item (a listing whose tokens carry an id rather than a sort key); only for unfiltered listings, whose
 * cursor is always their last item.
 */
export function mapPage<T, U>(page: Page<T>, convert: (item: T) => U, cursorOf?: (item: U) => string): Page<U> {
  const items = page.items.map(convert);
  if (page.after === undefined) return { items };
  return { items, after: cursorOf === undefined ? page.after : cursorOf(items[items.length - 1]) };
}

/** A condition on each entry read, applied by DynamoDB after reading it (so under the read budget). */
export interface ListingFilter {
  /** A FilterExpression; its placeholders must not be `#pk`, `#sk`, `:pk`, `:after` or `:prefix`. */
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

interface ListingBase {
  /** The partition key value. */
  partition: string;
  /** Sort-key order (the default), or its reverse. */
  ascending?: boolean;
  /** A strongly consistent read (the table only). */
  consistent?: boolean;
  filter?: ListingFilter;
}

/**
 * What a listing reads: one partition of an index (keys `<index>pk` / `<index>sk`, see table-definition.ts) or
 * of the table, optionally only the sort keys beginning with `prefix`. A prefix takes the one sort-key condition
 * a Query has, so its cursor becomes a start key instead, which on an index would need the item's table key
 * too: prefixes are for table listings only.
 */
export type Listing = ListingBase & ({ index?: string; prefix?: undefined } | { index?: undefined; prefix: string });

export interface PageRequest {
  /** Entries the page holds at most. */
  size: number;
  /** The sort key to continue after (in the listing's direction), from the previous page. */
  after?: string;
  /**
   * Stop reading once this holds of the entries read (a page cut by bytes rather than count): the page may then
   * be short, with `after` set; the caller cuts what it answers.
   */
  until?: (items: readonly Item[]) => boolean;
}

function keyNames(index: string | undefined): { pk: string; sk: string } {
  if (index === undefined) return { pk: PARTITION_KEY, sk: SORT_KEY };
  const definition = GLOBAL_INDEXES.find((candidate) => candidate.name === index);
  if (definition === undefined) throw new Error(`No index ${index} in the table definition.`);
  return { pk: definition.partitionKey, sk: definition.sortKey };
}

/**
 * One page of `listing` after `page.after`. Without a filter it reads `size + 1` entries (or until `until`
 * holds), so pages are full except the last. With a filter it examines at most filterBudget(size) entries and
 * about 1 MB (queryFiltered) and may answer a short, even empty page whose `after` is the last entry examined.
 * Throws what the DynamoDB client throws, and Error for an index the table does not define.
 */
export async function readPage(listing: Listing, page: PageRequest): Promise<Page<Item>> {
  const { pk, sk } = keyNames(listing.index);
  const names: Record<string, string> = { '#pk': pk, ...listing.filter?.names };
  const values: Record<string, unknown> = { ':pk': listing.partition, ...listing.filter?.values };
  const ascending = listing.ascending ?? true;
  let condition = '#pk = :pk';
  let start: Key | undefined;
  if (listing.prefix !== undefined || page.after !== undefined) names['#sk'] = sk;
  if (listing.prefix !== undefined) {
    condition += ' AND begins_with(#sk, :prefix)';
    values[':prefix'] = listing.prefix;
    if (page.after !== undefined) start = { [pk]: listing.partition, [sk]: page.after };
  } else if (page.after !== undefined) {
    condition += ` AND #sk ${ascending ? '>' : '<'} :after`;
    values[':after'] = page.after;
  }
  const input: QuerySpec = {
    IndexName: listing.index,
    KeyConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ScanIndexForward: ascending,
    ConsistentRead: listing.consistent,
  };
  const read =
    listing.filter === undefined
      ? await readUntil(input, page.size + 1, { start, until: page.until })
      : await queryFiltered(
          { ...input, FilterExpression: listing.filter.expression },
          { want: page.size + 1, budget: filterBudget(page.size), start, until: page.until },
        );
  const keyOf = (item: Key) => String(item[sk]);
  return cutPage(read.items, page.size, keyOf, read.lastExamined === undefined ? undefined : keyOf(read.lastExamined));
}

/**
 * The page of `matched` (in order; it may hold more than `size`): past `size` the next page starts after the last
 * entry returned; otherwise after `lastExamined`, where the read stopped before the end (the entries between
 * matched nothing), and nowhere when it did not.
 */
export function cutPage<T>(
  matched: readonly T[],
  size: number,
  keyOf: (item: T) => string,
  lastExamined?: string,
): Page<T> {
  const items = matched.slice(0, size);
  if (matched.length > size) return { items, after: keyOf(items[items.length - 1]) };
  return lastExamined === undefined ? { items } : { items, after: lastExamined };
}

/** An ordered source of entries: at most `limit` after the position `after`, and the position after them when more follow. */
export type Source<T> = (after: string | undefined, limit: number) => Promise<Page<T>>;

/** `sorted` (ascending by `keyOf`, keys unique) as a source: for listings of named ids. */
export function listSource<T>(sorted: readonly T[], keyOf: (item: T) => string): Source<T> {
  return async (after, limit) => {
    const rest = after === undefined ? sorted : sorted.filter((item) => keyOf(item) > after);
    return cutPage(rest, limit, keyOf);
  };
}

/**
 * A page of the entries of `source` that `keep` keeps (a check in code, such as BatchGets against the other
 * filters), read after `page.after` in batches of what the page still misses, until the page is full and one more
 * is known, the source ends, or `budget` entries were examined: by default filterBudget(size) (bounded reads);
 * `Infinity` for a source the request bounds (its named ids), whose pages stay full. Where the budget ended the
 * read, the next page starts after the last entry examined. Throws what `source` and `keep` throw.
 */
export async function examinePage<C, T>(
  source: Source<C>,
  keep: (batch: C[]) => Promise<T[]>,
  page: { size: number; after?: string; keyOf: (item: T) => string; budget?: number },
): Promise<Page<T>> {
  const budget = page.budget ?? filterBudget(page.size);
  const found: T[] = [];
  let cursor = page.after;
  let examined = 0;
  let more = true;
  while (found.length <= page.size && more && examined < budget) {
    const batch = await source(cursor, Math.min(page.size + 1 - found.length, budget - examined));
    more = batch.after !== undefined;
    if (batch.items.length === 0) break;
    cursor = batch.after;
    examined += batch.items.length;
    found.push(...(await keep(batch.items)));
  }
  return cutPage(found, page.size, page.keyOf, more && examined >= budget ? cursor : undefined);
}

/**
 * A page of the named `ids` (sorted, unique) after `page.after`, of those `read` finds (BatchGets, in the order
 * given): read in id order, a page's worth at a time, until the page is full and one more is known. Not under the
 * read budget: the request bounds the ids (at most 100), and pages stay full.
 */
export function namedPage<T>(
  ids: readonly string[],
  read: (batch: string[]) => Promise<T[]>,
  page: { size: number; after?: string; keyOf: (item: T) => string },
): Promise<Page<T>> {
  return examinePage(
    listSource(ids, (id) => id),
    read,
    { ...page, budget: Infinity },
  );
}

/** DynamoDB ends a Query page after 1 MB of reads; a filtered listing reads no more than that in one call. */
const MAX_READ_BYTES = 1024 * 1024;

/**
 * Fewest entries one Query asks for, so that a selective filter does not cost one round trip per few matches
 * (at most this many entries are read past the page; they are read again by the next page).
 */
const MIN_READ = 100;

/**
 * Reads `input`, which carries a FilterExpression, from after `start` until `want` items matched, `budget`
 * entries were examined, about 1 MB was read, `until` holds of the matches, or the query ended. The matches may
 * be more than `want` (the caller cuts its page). Each Query asks for as many entries as the match rate seen so
 * far predicts the rest needs (at least MIN_READ, at most what is left of the budget and of the bytes). The byte
 * count comes from ConsumedCapacity (requested on every call; a read unit is 4 KB, 8 KB when eventually
 * consistent); where none is reported, a Query that DynamoDB ended at its own 1 MB page still ends the read.
 * Throws what the DynamoDB client throws.
 */
async function queryFiltered(
  input: QuerySpec & { FilterExpression: string },
  options: { want: number; budget: number; start?: Key; until?: (items: readonly Item[]) => boolean },
): Promise<Read> {
  const bytesPerUnit = input.ConsistentRead === true ? 4096 : 8192;
  const items: Item[] = [];
  let examined = 0;
  let bytes = 0;
  let start = options.start;
  for (;;) {
    const limit = nextLimit({
      wanted: options.want - items.length,
      matched: items.length,
      examined,
      bytes,
      left: options.budget - examined,
    });
    const page = await db.send(
      new QueryCommand({
        ...input,
        TableName: TABLE_NAME,
        ExclusiveStartKey: start,
        Limit: limit,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    const scanned = page.ScannedCount ?? 0;
    examined += scanned;
    bytes += (page.ConsumedCapacity?.CapacityUnits ?? 0) * bytesPerUnit;
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
    if (start === undefined) return { items };
    // A page that ends before its Limit with more to read was ended by DynamoDB at 1 MB.
    const endedAtPageLimit = scanned < limit;
    const enough = items.length >= options.want || (options.until?.(items) ?? false);
    if (enough || examined >= options.budget || bytes >= MAX_READ_BYTES || endedAtPageLimit) {
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
