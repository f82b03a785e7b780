/**
 * Activity log records (O = T#<key>#ORG#<org>). One item per record, keyed by its id; the record's timelines are
 * GSI entries of that same item, on four indexes of their own:
 *
 *   pk O#ACT#<id>   sk ACTIVITY     the record: compressed content, its size, timestamp, filter attributes
 *      gsi6: O#ACTS / <pos>                     the organization's log
 *      gsi7: O#ACTS#DOC#<d> / <pos>             a document's log (records with a documentId)
 *      gsi8: O#ACTS#TARGET#<t> / <pos>          a target entity's log (records with a targetEntityId)
 *      gsi9: O#ACTS#USER#<u> / <pos>            an acting user's log (records with an actionUser)
 *      gsi5: T#<key>#JUDGMENTS / <O>#<D>#<pos>  judgments only (docs/decisions.md §9; see shared/db/judgment.ts)
 *
 * `<pos>` is `<ts>#<seq>#<id>`: the server timestamp in ms zero-padded to 15 digits, the record's place in its
 * request (3 digits, so a batch, which shares one timestamp, reads back in the order it was sent), and the id.
 * Every timeline reads in time order at the cost of its page. Because the timelines are index entries of the one
 * item, a Put that overwrites a record (mutable logs) moves every entry with it: nothing stale is left behind.
 *
 * What a record costs (docs/architecture.md "Access patterns": the figures and the layouts measured against this one):
 * - The four timeline indexes share one sort-key attribute (gsi6sk, the position), so the item carries it once,
 *   and project only what a page needs (ACTIVITY_TIMELINE_ATTRIBUTES): an entry is the record without the other
 *   timelines' keys and the organization id (its readers know it), so a 1.5 KB record's entry stays within 1 KB
 *   (1 WCU) and a page of 100 is one Query.
 * - The content is stored as brotli-compressed JSON (Binary) beside its uncompressed size (the page byte budget):
 *   free-form JSON round-trips exactly whatever its shape (DynamoDB maps nest at most 32 levels deep), and
 *   realistic content is 2-3x smaller. Every reader goes through toActivity (decodeContent).
 * - Nothing derivable is stored twice: the timestamp of a timeline entry is in its position, the target entity
 *   only in the content (the target's timeline is its key), and the identity hash is computed from the content
 *   when it is compared (shared/domain/activities.ts contentHash). The filters a timeline does not key on
 *   (featureType, actionType, userId, documentId) are copied as plain attributes for its FilterExpression.
 */
import { brotliCompressSync, brotliDecompressSync, constants as zlib } from 'node:zlib';
import { batchGet, type Item, type ItemKey } from './batch';
import { TABLE_NAME } from './client';
import { classifyJudgment, judgmentAttributes } from './judgment';
import { key, segment, sortableNumber } from './keys';
import { organizationPartition } from './organization';
import { readPage, type Listing, type QuerySpec } from './query';
import { named, type TransactItem } from './transact';

export const FEATURE_TYPES = ['comment', 'reaction', 'recorder', 'crdt', 'custom'] as const;
export type FeatureType = (typeof FEATURE_TYPES)[number];

export interface ActionUser {
  userId: string;
  email?: string;
  name?: string;
}

/** The fields a client sends for one record (docs/api-spec.md "Activity record"), with the id always set. */
export interface ActivityContent {
  id: string;
  featureType: FeatureType;
  actionType: string;
  actionUser?: ActionUser;
  targetEntityId?: string;
  targetSubEntityId?: string;
  changes?: Record<string, unknown>;
  entityData?: unknown;
  entityTargetData?: unknown;
  displayMessageTemplate?: string;
  displayMessageTemplateData?: Record<string, unknown>;
  actionIcon?: string;
  isActivityResolverUsed?: boolean;
}

export interface StoredActivity {
  organizationId: string;
  documentId?: string;
  content: ActivityContent;
  /** Server time of the write, ms. */
  timestamp: number;
  /** Position in every timeline (`<ts>#<seq>#<id>`): the order of listings and their page cursor. */
  position: string;
  /** Bytes of the content as JSON (what the record adds to a response). */
  size: number;
}

/** What a write stores: the record's scope and content, and its place in the request. */
export interface ActivityWrite {
  organizationId: string;
  documentId?: string;
  content: ActivityContent;
  timestamp: number;
  seq: number;
}

const RECORD_SORT_KEY = 'ACTIVITY';

/** The timeline indexes (shared/db/table-definition.ts) and the sort key they share. */
const TIMELINES = { organization: 'gsi6', document: 'gsi7', target: 'gsi8', user: 'gsi9' } as const;
const POSITION = 'gsi6sk';

export const activityKey = (apiKeyId: string, organizationId: string, id: string): ItemKey => ({
  pk: key(organizationPartition(apiKeyId, organizationId), 'ACT', segment(id)),
  sk: RECORD_SORT_KEY,
});

const logPartition = (apiKeyId: string, organizationId: string, ...parts: string[]) =>
  key(organizationPartition(apiKeyId, organizationId), 'ACTS', ...parts);

const position = (timestamp: number, seq: number, id: string) =>
  key(sortableNumber(timestamp), sortableNumber(seq, 3), segment(id));

/** Brotli quality: 2.3x on a 1.5 KB record in ~0.05 ms; 11 gains ~10 % more at ~40x the time (docs/architecture.md "Access patterns"). */
const QUALITY = 6;

/** The content as stored: brotli-compressed JSON, and the JSON's size in bytes. */
export function encodeContent(content: ActivityContent): { content: Buffer; size: number } {
  const json = Buffer.from(JSON.stringify(content));
  const params = {
    [zlib.BROTLI_PARAM_QUALITY]: QUALITY,
    [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
    [zlib.BROTLI_PARAM_SIZE_HINT]: json.length,
  };
  return { content: brotliCompressSync(json, { params }), size: json.length };
}

/**
 * The content of a stored item or index entry. The Binary attribute arrives as bytes from the SDK and as base64
 * text in a Lambda stream event's JSON (which util-dynamodb's unmarshall leaves as it is). Throws on bytes that
 * are not a stored content.
 */
export function decodeContent(stored: unknown): ActivityContent {
  const bytes = typeof stored === 'string' ? Buffer.from(stored, 'base64') : stored;
  if (!(bytes instanceof Uint8Array)) throw new Error('An activity item without content.');
  return JSON.parse(brotliDecompressSync(bytes).toString('utf8')) as ActivityContent;
}

/**
 * The whole item of a record: a Put replaces every attribute, index keys included. A judgment (docs/decisions.md §9)
 * also carries its judgment attributes and joins the judgments index; built here so every writer gets them.
 */
export function activityItem(apiKeyId: string, write: ActivityWrite): Item {
  const { organizationId, documentId, content } = write;
  const pos = position(write.timestamp, write.seq, content.id);
  const userId = content.actionUser?.userId;
  const { targetEntityId } = content;
  return {
    ...activityKey(apiKeyId, organizationId, content.id),
    organizationId,
    documentId,
    featureType: content.featureType,
    actionType: content.actionType,
    userId,
    // Judgments read it from their index (JUDGMENT_INDEX_ATTRIBUTES); a timeline entry has it in its position.
    timestamp: write.timestamp,
    ...encodeContent(content),
    [`${TIMELINES.organization}pk`]: logPartition(apiKeyId, organizationId),
    [POSITION]: pos,
    ...(documentId === undefined
      ? {}
      : { [`${TIMELINES.document}pk`]: logPartition(apiKeyId, organizationId, 'DOC', segment(documentId)) }),
    ...(targetEntityId === undefined
      ? {}
      : { [`${TIMELINES.target}pk`]: logPartition(apiKeyId, organizationId, 'TARGET', segment(targetEntityId)) }),
    ...(userId === undefined
      ? {}
      : { [`${TIMELINES.user}pk`]: logPartition(apiKeyId, organizationId, 'USER', segment(userId)) }),
    ...judgmentAttributes(apiKeyId, { organizationId, documentId, position: pos }, classifyJudgment(content)),
  };
}

/**
 * Writes the record. `mustBeNew`: the Put fails with ActivityAppeared when a record with that id appeared since it
 * was read (immutable logs), so the caller can read again and decide; otherwise it overwrites.
 */
export function putActivityItem(apiKeyId: string, write: ActivityWrite, options: { mustBeNew: boolean }): TransactItem {
  return named(
    {
      Put: {
        TableName: TABLE_NAME,
        Item: activityItem(apiKeyId, write),
        ...(options.mustBeNew ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      },
    },
    () => new ActivityAppeared(),
  );
}

/** A record with the id of one being written appeared since it was read (immutable logs). */
export class ActivityAppeared extends Error {}

/**
 * A record from its item, or from a timeline entry, which does not carry the organization id: the reader of a
 * timeline passes it.
 */
export function toActivity(item: Item, organizationId = String(item.organizationId)): StoredActivity {
  const position = String(item[POSITION]);
  return {
    organizationId,
    documentId: item.documentId as string | undefined,
    content: decodeContent(item.content),
    size: Number(item.size),
    timestamp: Number(position.split('#')[0]),
    position,
  };
}

/** The records among `ids` that exist, keyed by id (one BatchGet per 100). Strongly consistent unless told. */
export async function getActivities(
  apiKeyId: string,
  organizationId: string,
  ids: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, StoredActivity>> {
  const items = await batchGet(
    ids.map((id) => activityKey(apiKeyId, organizationId, id)),
    options,
  );
  return new Map(
    items.map((item) => toActivity(item, organizationId)).map((activity) => [activity.content.id, activity]),
  );
}

/** Filters of a listing; every one given must hold. */
export interface ActivityFilter {
  documentId?: string;
  targetEntityId?: string;
  userId?: string;
  featureTypes?: readonly string[];
  actionTypes?: readonly string[];
}

/** True when the record passes every filter (for records read by id rather than through a timeline). */
export function matchesFilter(activity: StoredActivity, filter: ActivityFilter): boolean {
  const { content } = activity;
  return (
    (filter.documentId === undefined || activity.documentId === filter.documentId) &&
    (filter.targetEntityId === undefined || content.targetEntityId === filter.targetEntityId) &&
    (filter.userId === undefined || content.actionUser?.userId === filter.userId) &&
    (filter.featureTypes === undefined || filter.featureTypes.includes(content.featureType)) &&
    (filter.actionTypes === undefined || filter.actionTypes.includes(content.actionType))
  );
}

/**
 * The narrowest timeline the filter names — a target entity (typically one annotation), then a document, then an
 * acting user, then the organization — with the filters it does not answer by itself as a FilterExpression.
 */
function timelineFor(apiKeyId: string, organizationId: string, filter: ActivityFilter): Listing {
  const { documentId, targetEntityId, userId } = filter;
  const rest: Array<[string, readonly string[] | undefined]> = [
    ['featureType', filter.featureTypes],
    ['actionType', filter.actionTypes],
  ];
  let timeline: { index: string; partition: string };
  if (targetEntityId !== undefined) {
    timeline = {
      index: TIMELINES.target,
      partition: logPartition(apiKeyId, organizationId, 'TARGET', segment(targetEntityId)),
    };
    rest.push(
      ['documentId', documentId === undefined ? undefined : [documentId]],
      ['userId', userId === undefined ? undefined : [userId]],
    );
  } else if (documentId !== undefined) {
    timeline = {
      index: TIMELINES.document,
      partition: logPartition(apiKeyId, organizationId, 'DOC', segment(documentId)),
    };
    rest.push(['userId', userId === undefined ? undefined : [userId]]);
  } else if (userId !== undefined) {
    timeline = { index: TIMELINES.user, partition: logPartition(apiKeyId, organizationId, 'USER', segment(userId)) };
  } else {
    timeline = { index: TIMELINES.organization, partition: logPartition(apiKeyId, organizationId) };
  }
  const given = rest.filter((entry): entry is [string, readonly string[]] => entry[1] !== undefined);
  if (given.length === 0) return timeline;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const clauses = given.map(([name, allowed], i) => {
    names[`#f${i}`] = name;
    const placeholders = [...new Set(allowed)].map((value, j) => {
      values[`:f${i}_${j}`] = value;
      return `:f${i}_${j}`;
    });
    return `#f${i} IN (${placeholders.join(', ')})`;
  });
  return { ...timeline, filter: { expression: clauses.join(' AND '), names, values } };
}

export interface LogPage {
  activities: StoredActivity[];
  /** The position after which the next page starts, when more may follow. */
  after?: string;
}

/**
 * The page that starts `ordered`: at most `limit` records and at most `maxBytes` of content (always at least one
 * record), with the position to continue after when anything is left over.
 */
export function takePage(ordered: readonly StoredActivity[], limit: number, maxBytes: number): LogPage {
  let count = 0;
  let bytes = 0;
  while (count < ordered.length && count < limit && (count === 0 || bytes + ordered[count].size <= maxBytes)) {
    bytes += ordered[count].size;
    count += 1;
  }
  const activities = ordered.slice(0, count);
  return count < ordered.length ? { activities, after: activities[count - 1].position } : { activities };
}

/** Bytes of the records' content (what they add to a response; StoredActivity.size). */
const contentBytes = (items: readonly Item[]) => items.reduce((sum, item) => sum + Number(item.size), 0);

/**
 * One page of the organization's log narrowed by `filter`, newest first unless `ascending`, after the position
 * `after`. The page is read from one timeline. Without other filters the page is full (`limit` records or
 * `maxBytes` of content, see takePage) unless the timeline ends. Filters the timeline does not key on are read
 * within the budget of bounded reads (shared/db/query.ts): a page may be short, even empty, and continues after
 * the last entry examined, so the next page neither skips nor repeats a record. Eventually consistent (GSIs
 * always are).
 */
export async function queryActivityLog(
  apiKeyId: string,
  organizationId: string,
  filter: ActivityFilter,
  options: { limit: number; maxBytes: number; ascending: boolean; after?: string },
): Promise<LogPage> {
  const listing = { ...timelineFor(apiKeyId, organizationId, filter), ascending: options.ascending };
  const read = await readPage(listing, {
    size: options.limit,
    after: options.after,
    until: (items) => contentBytes(items) > options.maxBytes,
  });
  const page = takePage(
    read.items.map((item) => toActivity(item, organizationId)),
    options.limit,
    options.maxBytes,
  );
  // Cut by bytes: resume after the last record returned. Otherwise where the read says.
  return page.after === undefined && read.after !== undefined
    ? { activities: page.activities, after: read.after }
    : page;
}

/** A document's log, oldest first: what document migration moves (its entries carry what toActivity reads). */
export function documentLogQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    IndexName: TIMELINES.document,
    KeyConditionExpression: `${TIMELINES.document}pk = :pk`,
    ExpressionAttributeValues: { ':pk': logPartition(apiKeyId, organizationId, 'DOC', segment(documentId)) },
  };
}

/**
 * A record as it is under another document id: the whole item rebuilt (so every index entry follows the
 * document) at the same position in every timeline. Its identity follows too: the hash is of the content and
 * the document (shared/domain/activities.ts contentHash).
 */
export function activityMovedTo(apiKeyId: string, stored: StoredActivity, documentId: string): Item {
  const seq = Number(stored.position.split('#')[1]);
  return activityItem(apiKeyId, {
    organizationId: stored.organizationId,
    documentId,
    content: stored.content,
    timestamp: stored.timestamp,
    seq,
  });
}
