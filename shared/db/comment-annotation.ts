/**
 * Comment threads (decisions §16). `O` = T#<key>#ORG#<org> (the organization partition), `CT` = O#CA#<annotationId>
 * (one partition per thread), `<lu>` = <lastUpdated, 15 digits>#<annotationId>, `<lc>` = <last comment ms>#<annotationId>:
 *
 *   pk CT  sk A                       the thread's head (every field but the comments; `version` for writes; the
 *                                     ids of its comments, `commentIds`, so a listing reads them by key)
 *      gsi1:  O#CA#DOC#<d> / <lu>                     a document's threads, newest lastUpdated first
 *      gsi2:  O#CA#DOC#<d>#STATUS#<statusId> / <lu>   by status
 *      gsi3:  O#CA#DOC#<d>#FROM#<userId> / <lu>       by author
 *      gsi10: O#CA#DOC#<d> / <lc>                     count and unread (keys and lastCommentBy only)
 *   pk CT  sk C#<commentId, 16 digits>          a comment (no index: it never moves)
 *   pk CT  sk M#<userId>                         a user tagged in the thread: gsi1 O#CA#DOC#<d>#MENTION#<userId> / <lu>,
 *                                                with copies of the head's filter fields
 *   pk CT  sk R#<userId>                         when the user last read the thread: gsi3 O#CA#DOC#<d>#READ#<userId> / <a>
 *
 * A thread's id names it in the organization (its key holds no document), so moving a document's threads rewrites
 * only their index keys. Every write of a thread reads its partition first and writes the head on condition that
 * its version is the one read: two writers of one thread never lose each other's change.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import {
  batchGet,
  batchWrite,
  byKey,
  deleteRequest,
  keyOfItem,
  keyString,
  putRequest,
  type Item,
  type ItemKey,
} from './batch';
import { TABLE_NAME, db } from './client';
import { fromJsonAttribute, toJsonAttribute } from './json-attribute';
import { key, segment, sortableNumber } from './keys';
import { organizationPartition } from './organization';
import { queryAll, type QuerySpec } from './query';
import { named, transactWrite, type TransactItem } from './transact';

export interface UserRef {
  userId: string;
  name?: string;
  email?: string;
}

export interface CommentStatus {
  id: string;
  name: string;
  type: 'default' | 'ongoing' | 'terminal';
}

export interface Visibility {
  type: 'public' | 'restricted';
  userIds?: string[];
}

export interface CommentRecord {
  commentId: number;
  commentText?: string;
  commentHtml?: string;
  from: UserRef;
  taggedUserContacts: Array<{ userId: string; contact?: Record<string, unknown> }>;
  context?: Record<string, unknown>;
  createdAt: number;
  lastUpdated: number;
  edited: boolean;
  /** Order of comments written in the same millisecond. */
  sequence: number;
  /** false when the comment asked for no activity record (`triggerActivities: false`). */
  triggerActivities?: boolean;
}

export interface ThreadHead {
  annotationId: string;
  organizationId: string;
  documentId: string;
  createdAt: number;
  lastUpdated: number;
  from: UserRef;
  status: CommentStatus;
  priority?: { id: string; name: string };
  assignedTo?: UserRef;
  context?: Record<string, unknown>;
  location?: { id: string; locationName?: string };
  visibility: Visibility;
  /** As shared/domain/comments/anchors.ts made it (StoredAnchor: positions, length, quoted text, blocks). */
  anchor?: Record<string, unknown>;
  commentCount: number;
  /** ms of the newest comment, and its author (the unread rule). */
  lastCommentAt: number;
  lastCommentBy: string;
  /** The highest comment id in the thread: generated ids follow it. */
  maxCommentId: number;
  /** The last sequence given to a comment. */
  sequence: number;
  /** Users tagged in any comment of the thread (their mention entries). */
  mentions: string[];
  /** Incremented by every write; the condition of the next. */
  version: number;
}

export interface Thread {
  head: ThreadHead;
  /** Oldest first. */
  comments: CommentRecord[];
}

/** A thread as stored: the thread and the user ids holding a read marker in it. */
export interface StoredThread extends Thread {
  readers: string[];
}

/** The thread changed since it was read (another writer): the caller reads it again. */
export class ThreadChanged extends Error {
  constructor(readonly annotationId: string) {
    super(`Thread ${annotationId} changed while it was written.`);
    this.name = 'ThreadChanged';
  }
}

/** A comment id the caller gave already names a comment of the thread. */
export class CommentExists extends Error {
  constructor(readonly commentId: number) {
    super(`Comment ${commentId} already exists.`);
    this.name = 'CommentExists';
  }
}

const HEAD = 'A';
const COMMENT = 'C';
const MENTION = 'M';
const READER = 'R';
/** Comment ids are non-negative safe integers: 16 digits keep their order in a key. */
const COMMENT_ID_DIGITS = 16;

const threadPartition = (apiKeyId: string, organizationId: string, annotationId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'CA', segment(annotationId));
const documentThreads = (apiKeyId: string, organizationId: string, documentId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'CA', 'DOC', segment(documentId));

/** The index partitions a listing reads, one per filter family (the keys above). */
export type StreamKind = 'document' | 'status' | 'author' | 'mention';

const STREAM_INDEX: Record<StreamKind, string> = { document: 'gsi1', status: 'gsi2', author: 'gsi3', mention: 'gsi1' };

export function streamPartition(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  kind: StreamKind,
  value?: string,
): { index: string; partition: string } {
  const base = documentThreads(apiKeyId, organizationId, documentId);
  const tag = { document: undefined, status: 'STATUS', author: 'FROM', mention: 'MENTION' }[kind];
  return {
    index: STREAM_INDEX[kind],
    partition: tag === undefined ? base : key(base, tag, segment(value ?? '')),
  };
}

const readersPartition = (apiKeyId: string, organizationId: string, documentId: string, userId: string) =>
  key(documentThreads(apiKeyId, organizationId, documentId), 'READ', segment(userId));

/** `<lastUpdated>#<annotationId>`: the listing position of a thread. */
export const listingPosition = (lastUpdated: number, annotationId: string) =>
  key(sortableNumber(lastUpdated), segment(annotationId));

const commentKey = (
  apiKeyId: string,
  head: Pick<ThreadHead, 'organizationId' | 'annotationId'>,
  commentId: number,
) => ({
  pk: threadPartition(apiKeyId, head.organizationId, head.annotationId),
  sk: key(COMMENT, sortableNumber(commentId, COMMENT_ID_DIGITS)),
});

const headKey = (apiKeyId: string, organizationId: string, annotationId: string): ItemKey => ({
  pk: threadPartition(apiKeyId, organizationId, annotationId),
  sk: HEAD,
});

/** The editor a thread is anchored in, when it is (its anchor as stored: shared/domain/comments/anchors.ts). */
const anchorEditorOf = (head: Pick<ThreadHead, 'anchor'>) =>
  typeof head.anchor?.editorId === 'string' ? head.anchor.editorId : undefined;

/**
 * A thread's listing entry at `position`: the fields a listing filters on, and the editor its anchor is in (so a
 * read of a page loads that editor beside the threads). Mention entries store these fields (all but `position`),
 * so a mention stream filters without the head.
 */
export function listingEntryOf(head: ThreadHead, position: string): ListingEntry {
  const editorId = anchorEditorOf(head);
  return {
    annotationId: head.annotationId,
    documentId: head.documentId,
    createdAt: head.createdAt,
    lastUpdated: head.lastUpdated,
    fromUserId: head.from.userId,
    statusId: head.status.id,
    mentions: head.mentions,
    ...(head.location === undefined ? {} : { locationId: head.location.id }),
    visibility: head.visibility,
    ...(editorId === undefined ? {} : { editorId }),
    position,
  };
}

/** What a listing stream yields: a thread's filter fields at its position. */
export interface ListingEntry {
  annotationId: string;
  documentId: string;
  createdAt: number;
  lastUpdated: number;
  fromUserId: string;
  statusId: string;
  mentions: string[];
  locationId?: string;
  visibility: Visibility;
  /** The editor the thread's anchor is in (none without an anchor, or on a mention entry written before it). */
  editorId?: string;
  /** The entry's sort key in its stream. */
  position: string;
  /**
   * On an entry of a head (the document, status and author streams, whose index items are the heads, every
   * attribute projected): the head as the index holds it and the ids of its comments, so the page's threads are read
   * by key (readListedThreads). Absent on a mention entry, and on a head written before heads listed their comments.
   */
  listed?: { head: ThreadHead; commentIds: number[] };
}

/**
 * The head's item. `commentIds`: the ids of the thread's comments as written beside it (what a listing reads by key);
 * undefined leaves them out (a head moved as it was stored before heads listed them).
 */
function headItem(apiKeyId: string, head: ThreadHead, commentIds: readonly number[] | undefined): Item {
  const position = listingPosition(head.lastUpdated, head.annotationId);
  const document = (kind: StreamKind, value?: string) =>
    streamPartition(apiKeyId, head.organizationId, head.documentId, kind, value).partition;
  return {
    ...headKey(apiKeyId, head.organizationId, head.annotationId),
    ...head,
    context: toJsonAttribute(head.context),
    fromUserId: head.from.userId,
    statusId: head.status.id,
    ...(head.location === undefined ? {} : { locationId: head.location.id }),
    gsi1pk: document('document'),
    gsi1sk: position,
    gsi2pk: document('status', head.status.id),
    gsi2sk: position,
    gsi3pk: document('author', head.from.userId),
    gsi3sk: position,
    gsi10pk: documentThreads(apiKeyId, head.organizationId, head.documentId),
    gsi10sk: listingPosition(head.lastCommentAt, head.annotationId),
    ...(commentIds === undefined ? {} : { commentIds: [...commentIds] }),
  };
}

/** The comment ids a stored head lists, when it lists them (heads written before they did do not). */
function listedCommentIds(item: Item): number[] | undefined {
  const ids = item.commentIds;
  return Array.isArray(ids) && ids.every((id) => Number.isSafeInteger(id)) ? (ids as number[]) : undefined;
}

function mentionItem(apiKeyId: string, head: ThreadHead, userId: string): Item {
  const { position, ...fields } = listingEntryOf(head, listingPosition(head.lastUpdated, head.annotationId));
  return {
    pk: threadPartition(apiKeyId, head.organizationId, head.annotationId),
    sk: key(MENTION, segment(userId)),
    ...fields,
    gsi1pk: streamPartition(apiKeyId, head.organizationId, head.documentId, 'mention', userId).partition,
    gsi1sk: position,
  };
}

function readerItem(apiKeyId: string, head: ThreadHead, userId: string, readAt: number): Item {
  return {
    pk: threadPartition(apiKeyId, head.organizationId, head.annotationId),
    sk: key(READER, segment(userId)),
    userId,
    annotationId: head.annotationId,
    documentId: head.documentId,
    readAt,
    gsi3pk: readersPartition(apiKeyId, head.organizationId, head.documentId, userId),
    gsi3sk: segment(head.annotationId),
  };
}

/** What an item stores for its keys and index keys (and a head for its listing), never part of the thread. */
const KEY_FIELDS = [
  'pk',
  'sk',
  'gsi1pk',
  'gsi1sk',
  'gsi2pk',
  'gsi2sk',
  'gsi3pk',
  'gsi3sk',
  'gsi10pk',
  'gsi10sk',
  'fromUserId',
  'statusId',
  'locationId',
  'commentIds',
];

function strip(item: Item): Item {
  const rest: Item = { ...item };
  for (const field of KEY_FIELDS) delete rest[field];
  return rest;
}

/**
 * A comment as stored: its client JSON (`context`, each tagged user's `contact`) as JSON strings
 * (shared/db/json-attribute.ts), since a map would refuse numbers DynamoDB cannot hold and more than 32 levels.
 */
function commentItem(apiKeyId: string, head: ThreadHead, comment: CommentRecord): Item {
  return {
    ...commentKey(apiKeyId, head, comment.commentId),
    ...comment,
    context: toJsonAttribute(comment.context),
    taggedUserContacts: comment.taggedUserContacts.map(({ contact, ...user }) => ({
      ...user,
      ...(contact === undefined ? {} : { contact: toJsonAttribute(contact) }),
    })),
  };
}

function toComment(item: Item): CommentRecord {
  const { context, taggedUserContacts, ...rest } = strip(item);
  const users = (taggedUserContacts ?? []) as Array<{ userId: string; contact?: unknown }>;
  return {
    ...(rest as unknown as CommentRecord),
    ...(context === undefined ? {} : { context: fromJsonAttribute(context) }),
    taggedUserContacts: users.map(({ contact, ...user }) => ({
      ...user,
      ...(contact === undefined ? {} : { contact: fromJsonAttribute<Record<string, unknown>>(contact) }),
    })),
  };
}

function toHead(item: Item): ThreadHead {
  const { context, ...rest } = strip(item);
  return {
    ...(rest as unknown as ThreadHead),
    ...(context === undefined ? {} : { context: fromJsonAttribute<Record<string, unknown>>(context) }),
  };
}
const byOrder = (a: CommentRecord, b: CommentRecord) => a.createdAt - b.createdAt || a.sequence - b.sequence;

/** The items of one thread partition as a thread, or undefined without a head. */
function assemble(items: readonly Item[]): StoredThread | undefined {
  const head = items.find((item) => item.sk === HEAD);
  if (head === undefined) return undefined;
  const comments = items.filter((item) => String(item.sk).startsWith(`${COMMENT}#`)).map(toComment);
  const readers = items.filter((item) => String(item.sk).startsWith(`${READER}#`)).map((item) => String(item.userId));
  return { head: toHead(head), comments: comments.sort(byOrder), readers };
}

/**
 * One thread with its comments: one Query of its partition's head and comments (`sk` from `A` to `C#~`), strongly
 * consistent when it is read for a write. Undefined when the thread does not exist.
 */
export async function readThread(
  apiKeyId: string,
  organizationId: string,
  annotationId: string,
  options: { consistent?: boolean; withReaders?: boolean } = {},
): Promise<StoredThread | undefined> {
  const pk = threadPartition(apiKeyId, organizationId, annotationId);
  const items = await queryAll({
    KeyConditionExpression: options.withReaders ? 'pk = :pk' : 'pk = :pk AND sk BETWEEN :head AND :comments',
    ExpressionAttributeValues: {
      ':pk': pk,
      ...(options.withReaders ? {} : { ':head': HEAD, ':comments': `${COMMENT}#~` }),
    },
    ConsistentRead: options.consistent ?? false,
  });
  return assemble(items);
}

/** Several threads by id (one Query each, at once); the ones that exist. */
export async function readThreads(
  apiKeyId: string,
  organizationId: string,
  annotationIds: readonly string[],
  options: { consistent?: boolean; withReaders?: boolean } = {},
): Promise<Map<string, StoredThread>> {
  const threads = await Promise.all(annotationIds.map((id) => readThread(apiKeyId, organizationId, id, options)));
  return new Map(threads.flatMap((thread) => (thread === undefined ? [] : [[thread.head.annotationId, thread]])));
}

/**
 * Comments of a thread a listing reads by key (BatchGetItem bills each item read, rounded up to 4 KB: ½ unit
 * eventually consistent): a thread whose head lists more is read by a Query of its partition (½ unit per 4 KB).
 */
export const MAX_BATCHED_COMMENTS = 8;

/**
 * The threads of a listing's entries, eventually consistent like the listing: where the entry carries its head and
 * the head lists at most MAX_BATCHED_COMMENTS comments, the head as listed and its comments read by key, all the
 * page's at once (BatchGetItem, 100 keys a call); otherwise one Query of the thread's partition (head and comments),
 * as readThreads. A thread one of whose listed comments was not found (it changed, or was deleted, since the index
 * entry was written) is read by its Query too, so an answer never holds a head with comments it no longer has.
 */
export async function readListedThreads(
  apiKeyId: string,
  organizationId: string,
  entries: readonly ListingEntry[],
): Promise<Map<string, Thread>> {
  const batchable = (entry: ListingEntry) =>
    entry.listed !== undefined && entry.listed.commentIds.length <= MAX_BATCHED_COMMENTS ? entry.listed : undefined;
  const keysOf = (listed: NonNullable<ListingEntry['listed']>) =>
    listed.commentIds.map((commentId) => commentKey(apiKeyId, listed.head, commentId));
  const batched = entries.flatMap((entry) => {
    const listed = batchable(entry);
    return listed === undefined ? [] : [listed];
  });
  const [found, queried] = await Promise.all([
    batchGet(batched.flatMap(keysOf), { consistent: false }).then(byKey),
    readThreads(
      apiKeyId,
      organizationId,
      entries.filter((entry) => batchable(entry) === undefined).map((entry) => entry.annotationId),
    ),
  ]);
  const threads = new Map<string, Thread>(queried);
  const changed: string[] = [];
  for (const listed of batched) {
    const items = keysOf(listed).map((itemKey) => found.get(keyString(itemKey)));
    if (items.some((item) => item === undefined)) changed.push(listed.head.annotationId);
    else
      threads.set(listed.head.annotationId, {
        head: listed.head,
        comments: (items as Item[]).map(toComment).sort(byOrder),
      });
  }
  for (const [annotationId, thread] of await readThreads(apiKeyId, organizationId, changed))
    threads.set(annotationId, thread);
  return threads;
}

/**
 * The transaction items that turn the thread `before` (as read; undefined for a new thread) into `after`: the
 * head, on condition it is still the version read (or absent), and the comments that changed. A caller-given
 * comment id already in the thread fails the transaction with CommentExists.
 */
export function threadWriteItems(apiKeyId: string, before: Thread | undefined, after: Thread): TransactItem[] {
  const { head } = after;
  const condition =
    before === undefined
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : {
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: { ':version': before.head.version },
        };
  const items: TransactItem[] = [
    named(
      {
        Put: {
          TableName: TABLE_NAME,
          Item: headItem(
            apiKeyId,
            head,
            after.comments.map((comment) => comment.commentId),
          ),
          ...condition,
        },
      },
      () => new ThreadChanged(head.annotationId),
    ),
  ];
  const old = new Map((before?.comments ?? []).map((comment) => [comment.commentId, comment]));
  for (const comment of after.comments) {
    const previous = old.get(comment.commentId);
    if (previous === comment) continue;
    const item = commentItem(apiKeyId, head, comment);
    items.push(
      previous === undefined
        ? named(
            { Put: { TableName: TABLE_NAME, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
            () => new CommentExists(comment.commentId),
          )
        : { Put: { TableName: TABLE_NAME, Item: item } },
    );
  }
  const kept = new Set(after.comments.map((comment) => comment.commentId));
  for (const comment of before?.comments ?? []) {
    if (!kept.has(comment.commentId))
      items.push({ Delete: { TableName: TABLE_NAME, Key: commentKey(apiKeyId, head, comment.commentId) } });
  }
  return items;
}

/**
 * After a thread's transaction: its mention entries as the new head has them (every one rewritten, since they carry
 * the head's position; the ones no longer tagged deleted), and read markers for `readers` at `readAt` (a user's own
 * comment counts as reading the thread). Each put is the same for the same thread, so a retry writes the same.
 */
export async function writeThreadEntries(
  apiKeyId: string,
  before: ThreadHead | undefined,
  after: ThreadHead,
  readers: { userIds: readonly string[]; readAt: number } = { userIds: [], readAt: 0 },
): Promise<void> {
  const removed = (before?.mentions ?? []).filter((userId) => !after.mentions.includes(userId));
  await batchWrite([
    ...after.mentions.map((userId) => putRequest(mentionItem(apiKeyId, after, userId))),
    ...removed.map((userId) => deleteRequest(keyOfItem(mentionItem(apiKeyId, after, userId)))),
    ...readers.userIds.map((userId) => putRequest(readerItem(apiKeyId, after, userId, readers.readAt))),
  ]);
}

/**
 * Deletes a thread: its comments, mention entries and read markers first, the head last (on condition it is still
 * the version read), so a delete that stops part way leaves a thread that a retry deletes.
 */
export async function deleteThread(apiKeyId: string, thread: StoredThread): Promise<void> {
  const { head } = thread;
  await batchWrite([
    ...thread.comments.map((comment) => deleteRequest(commentKey(apiKeyId, head, comment.commentId))),
    ...head.mentions.map((userId) => deleteRequest(keyOfItem(mentionItem(apiKeyId, head, userId)))),
    ...thread.readers.map((userId) => deleteRequest(keyOfItem(readerItem(apiKeyId, head, userId, 0)))),
  ]);
  await transactWrite([
    named(
      {
        Delete: {
          TableName: TABLE_NAME,
          Key: headKey(apiKeyId, head.organizationId, head.annotationId),
          ConditionExpression: 'version = :version',
          ExpressionAttributeValues: { ':version': head.version },
        },
      },
      () => new ThreadChanged(head.annotationId),
    ),
  ]);
}

/** Marks threads read by `userId` at `readAt`. */
export async function markRead(apiKeyId: string, heads: readonly ThreadHead[], userId: string, readAt: number) {
  await batchWrite(heads.map((head) => putRequest(readerItem(apiKeyId, head, userId, readAt))));
}

/**
 * An entry of a listing stream, from its index item: a head (every field: its anchor names the editor) or a mention
 * entry (the entry's fields as stored).
 */
function toEntry(item: Item, sortKey: string): ListingEntry {
  const anchor = item.anchor as { editorId?: unknown } | undefined;
  const editorId = item.editorId ?? anchor?.editorId;
  const commentIds = item.sk === HEAD ? listedCommentIds(item) : undefined;
  return {
    annotationId: String(item.annotationId),
    documentId: String(item.documentId),
    createdAt: Number(item.createdAt),
    lastUpdated: Number(item.lastUpdated),
    fromUserId: String(item.fromUserId),
    statusId: String(item.statusId),
    mentions: (item.mentions as string[] | undefined) ?? [],
    ...(item.locationId === undefined ? {} : { locationId: String(item.locationId) }),
    visibility: item.visibility as Visibility,
    ...(typeof editorId === 'string' ? { editorId } : {}),
    position: String(item[sortKey]),
    ...(commentIds === undefined ? {} : { listed: { head: toHead(item), commentIds } }),
  };
}

/**
 * At most `limit` entries of one stream, newest first, with positions below `before` (exclusive) and within
 * [`low`, `high`] (positions, inclusive); `more` when the stream may hold further entries. One Query (two when
 * DynamoDB's 1 MB page ends it first, which these small pages do not reach).
 */
export async function readStream(
  stream: { index: string; partition: string },
  options: { limit: number; before?: string; low?: string; high?: string },
): Promise<{ entries: ListingEntry[]; more: boolean }> {
  const sortKey = `${stream.index}sk`;
  // The upper bound is the cursor (read inclusive and dropped: positions are unique) or `high`.
  const upper =
    options.before !== undefined && (options.high === undefined || options.before < options.high)
      ? options.before
      : options.high;
  // An empty range (a lower bound above the upper one) reads nothing: DynamoDB refuses such a BETWEEN.
  if (options.low !== undefined && upper !== undefined && options.low > upper) return { entries: [], more: false };
  const values: Record<string, unknown> = { ':pk': stream.partition };
  let condition = `#pk = :pk`;
  if (options.low !== undefined && upper !== undefined) {
    condition += ' AND #sk BETWEEN :low AND :high';
    values[':low'] = options.low;
    values[':high'] = upper;
  } else if (upper !== undefined) {
    condition += ' AND #sk <= :high';
    values[':high'] = upper;
  } else if (options.low !== undefined) {
    condition += ' AND #sk >= :low';
    values[':low'] = options.low;
  }
  const dropFirst = upper !== undefined && upper === options.before ? 1 : 0;
  const want = options.limit + dropFirst;
  const input: QuerySpec = {
    IndexName: stream.index,
    KeyConditionExpression: condition,
    ExpressionAttributeNames: { '#pk': `${stream.index}pk`, ...(condition.includes('#sk') ? { '#sk': sortKey } : {}) },
    ExpressionAttributeValues: values,
    ScanIndexForward: false,
  };
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({ ...input, TableName: TABLE_NAME, Limit: want - items.length, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined && items.length < want);
  const entries = items
    .map((item) => toEntry(item, sortKey))
    .filter((entry) => entry.position !== options.before)
    .slice(0, options.limit);
  return { entries, more: start !== undefined };
}

/**
 * The document's threads for counting: each thread's last-comment time and author (gsi10, keys only), and, with
 * `userId`, when that user last read each thread they read (gsi3). Reads every thread of the document: ~0.25 KB each.
 */
export async function documentCountEntries(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  userId?: string,
): Promise<{
  threads: Array<{ annotationId: string; lastCommentAt: number; lastCommentBy: string }>;
  readAt: Map<string, number>;
}> {
  const [threadItems, readItems] = await Promise.all([
    queryAll({
      IndexName: 'gsi10',
      KeyConditionExpression: 'gsi10pk = :pk',
      ExpressionAttributeValues: { ':pk': documentThreads(apiKeyId, organizationId, documentId) },
    }),
    userId === undefined
      ? Promise.resolve([])
      : queryAll({
          IndexName: 'gsi3',
          KeyConditionExpression: 'gsi3pk = :pk',
          ExpressionAttributeValues: { ':pk': readersPartition(apiKeyId, organizationId, documentId, userId) },
        }),
  ]);
  const threads = threadItems.map((item) => {
    const [at, ...id] = String(item.gsi10sk).split('#');
    return { annotationId: id.join('#'), lastCommentAt: Number(at), lastCommentBy: String(item.lastCommentBy) };
  });
  return {
    threads,
    readAt: new Map(readItems.map((item) => [segment(String(item.annotationId)), Number(item.readAt)])),
  };
}

/** Every thread head of a document (gsi1): what document migration moves. */
export function documentThreadsQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': documentThreads(apiKeyId, organizationId, documentId) },
  };
}

/**
 * A thread as it is in another document: its head, mention entries and read markers with the new document's index
 * keys (the item keys, and so the comments, do not change). The head comes last, so a move that stops part way
 * still finds the thread under the old document and redoes it.
 */
export async function threadMovedTo(apiKeyId: string, item: Item, documentId: string): Promise<Item[]> {
  const head = { ...toHead(item), documentId };
  const readers = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
    ExpressionAttributeValues: { ':pk': String(item.pk), ':r': `${READER}#` },
    ConsistentRead: true,
  });
  return [
    ...head.mentions.map((userId) => mentionItem(apiKeyId, head, userId)),
    ...readers.map((reader) => readerItem(apiKeyId, head, String(reader.userId), Number(reader.readAt))),
    headItem(apiKeyId, head, listedCommentIds(item)),
  ];
}
