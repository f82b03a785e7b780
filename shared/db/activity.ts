/**
 * Activity log records (O = T#<key>#ORG#<org>). One item per record, keyed by its id; the record's timelines are
 * GSI entries of that same item:
 *
 *   pk O#ACT#<id>   sk ACTIVITY     the record: client content (JSON), its hash, timestamp, filter attributes
 *      gsi1: O#ACTS / <pos>                     the organization's log
 *      gsi2: O#ACTS#DOC#<d> / <pos>             a document's log (records with a documentId)
 *      gsi3: O#ACTS#TARGET#<t> / <pos>          a target entity's log (records with a targetEntityId)
 *      gsi4: O#ACTS#USER#<u> / <pos>            an acting user's log (records with an actionUser)
 *      gsi5: T#<key>#JUDGMENTS / <O>#<D>#<pos>  judgments only (docs/decisions.md §9; see shared/db/judgment.ts)
 *
 * `<pos>` is `<ts>#<seq>#<id>`: the server timestamp in ms zero-padded to 15 digits, the record's place in its
 * request (3 digits, so a batch, which shares one timestamp, reads back in the order it was sent), and the id.
 * Every timeline reads in time order at the cost of its page. Because the timelines are index entries of the one
 * item, a Put that overwrites a record (mutable logs) moves every entry with it: nothing stale is left behind.
 *
 * The client's content is stored as one JSON string rather than as DynamoDB maps: free-form JSON (entityData and
 * the like) round-trips exactly whatever its shape (DynamoDB maps nest at most 32 levels deep), its length is
 * the stored and returned size, and the filterable fields are copied beside it as plain attributes.
 */
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
  /** Identity of the client-supplied content (see shared/domain/activities.ts): equal hashes, identical record. */
  contentHash: string;
  /** Server time of the write, ms. */
  timestamp: number;
  /** Position in every timeline (`<ts>#<seq>#<id>`): the order of listings and their page cursor. */
  position: string;
  /** Bytes of the stored content (what the record adds to a response). */
  size: number;
}

/** What a write stores: the record's scope, content and identity, and its place in the request. */
export interface ActivityWrite {
  organizationId: string;
  documentId?: string;
  content: ActivityContent;
  contentHash: string;
  timestamp: number;
  seq: number;
}

const RECORD_SORT_KEY = 'ACTIVITY';

export const activityKey = (apiKeyId: string, organizationId: string, id: string): ItemKey => ({
  pk: key(organizationPartition(apiKeyId, organizationId), 'ACT', segment(id)),
  sk: RECORD_SORT_KEY,
});

const logPartition = (apiKeyId: string, organizationId: string, ...parts: string[]) =>
  key(organizationPartition(apiKeyId, organizationId), 'ACTS', ...parts);

const position = (timestamp: number, seq: number, id: string) =>
  key(sortableNumber(timestamp), sortableNumber(seq, 3), segment(id));

/**
 * The whole item of a record: a Put replaces every attribute, index keys included. A judgment (docs/decisions.md §9)
 * also carries its judgment attributes and joins the judgments index; built here so every writer gets them.
 */
export function activityItem(apiKeyId: string, write: ActivityWrite): Item {
  const { organizationId, documentId, content } = write;
  const pos = position(write.timestamp, write.seq, content.id);
  const userId = content.actionUser?.userId;
  return {
    ...activityKey(apiKeyId, organizationId, content.id),
    organizationId,
    documentId,
    featureType: content.featureType,
    actionType: content.actionType,
    targetEntityId: content.targetEntityId,
    userId,
    timestamp: write.timestamp,
    content: JSON.stringify(content),
    contentHash: write.contentHash,
    gsi1pk: logPartition(apiKeyId, organizationId),
    gsi1sk: pos,
    ...(documentId === undefined ? {} : { gsi2pk: logPartition(apiKeyId, organizationId, 'DOC', segment(documentId)), gsi2sk: pos }),
    ...(content.targetEntityId === undefined
      ? {}
      : { gsi3pk: logPartition(apiKeyId, organizationId, 'TARGET', segment(content.targetEntityId)), gsi3sk: pos }),
    ...(userId === undefined ? {} : { gsi4pk: logPartition(apiKeyId, organizationId, 'USER', segment(userId)), gsi4sk: pos }),
    ...judgmentAttributes(apiKeyId, { organizationId, documentId, position: pos }, classifyJudgment(content)),
  };
}

/**
 * Writes the record. `mustBeNew`: the Put fails with ActivityAppeared when a record with that id appeared since it
 * was read (immutable logs), so the caller can read again and decide; otherwise it overwrites.
 */
export function putActivityItem(apiKeyId: string, write: ActivityWrite, options: { mustBeNew: boolean }): TransactItem {
  return named({
    Put: {
      TableName: TABLE_NAME,
      Item: activityItem(apiKeyId, write),
      ...(options.mustBeNew ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
    },
  }, () => new ActivityAppeared());
}

/** A record with the id of one being written appeared since it was read (immutable logs). */
export class ActivityAppeared extends Error {}

export function toActivity(item: Item): StoredActivity {
  const content = String(item.content);
  return {
    organizationId: String(item.organizationId),
    documentId: item.documentId as string | undefined,
    content: JSON.parse(content) as ActivityContent,
    size: Buffer.byteLength(content),
    contentHash: String(item.contentHash),
    timestamp: Number(item.timestamp),
    position: String(item.gsi1sk),
  };
}

/** The records among `ids` that exist, keyed by id (one BatchGet per 100). Strongly consistent unless told. */
export async function getActivities(
  apiKeyId: string,
  organizationId: string,
  ids: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, StoredActivity>> {
  const items = await batchGet(ids.map((id) => activityKey(apiKeyId, organizationId, id)), options);
  return new Map(items.map(toActivity).map((activity) => [activity.content.id, activity]));
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
    timeline = { index: 'gsi3', partition: logPartition(apiKeyId, organizationId, 'TARGET', segment(targetEntityId)) };
    rest.push(['documentId', documentId === undefined ? undefined : [documentId]], ['userId', userId === undefined ? undefined : [userId]]);
  } else if (documentId !== undefined) {
    timeline = { index: 'gsi2', partition: logPartition(apiKeyId, organizationId, 'DOC', segment(documentId)) };
    rest.push(['userId', userId === undefined ? undefined : [userId]]);
  } else if (userId !== undefined) {
    timeline = { index: 'gsi4', partition: logPartition(apiKeyId, organizationId, 'USER', segment(userId)) };
  } else {
    timeline = { index: 'gsi1', partition: logPartition(apiKeyId, organizationId) };
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

/** Bytes of the records' stored content (what they add to a response; StoredActivity.size). */
const contentBytes = (items: readonly Item[]) => items.reduce((sum, item) => sum + Buffer.byteLength(String(item.content)), 0);

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
  const read = await readPage(listing, { size: options.limit, after: options.after, until: (items) => contentBytes(items) > options.maxBytes });
  const page = takePage(read.items.map(toActivity), options.limit, options.maxBytes);
  // Cut by bytes: resume after the last record returned. Otherwise where the read says.
  return page.after === undefined && read.after !== undefined ? { activities: page.activities, after: read.after } : page;
}

/** A document's log (gsi2), oldest first: what document migration moves. */
export function documentLogQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': logPartition(apiKeyId, organizationId, 'DOC', segment(documentId)) },
  };
}

/**
 * A record as it is under another document id: the whole item rebuilt (so every index entry follows the
 * document) at the same position in every timeline, with the identity `contentHash` computed for the new document.
 */
export function activityMovedTo(apiKeyId: string, stored: StoredActivity, documentId: string, contentHash: string): Item {
  const seq = Number(stored.position.split('#')[1]);
  return activityItem(apiKeyId, { organizationId: stored.organizationId, documentId, content: stored.content, contentHash, timestamp: stored.timestamp, seq });
}
