/**
 * CRDT editor data: the Yjs document state of each editor of a document, in one partition per document
 * (D = T#<key>#ORG#<org>#CRDT#<doc>):
 *
 *   pk D   sk E#<editor>#DELTA#<id>        a change appended under contention: one Yjs update (binary), its
 *                                          lastUpdate and lastUpdatedBy, stamped with the editor's incarnation
 *   pk D   sk E#<editor>#HEAD              head: type, contentKey, version, writeId, incarnation, parts, stateBytes,
 *                                          lastUpdate, lastUpdatedBy, sessionId, folded (the ids of the deltas its
 *                                          fold took in), and part 0 of the state (binary)
 *   pk D   sk E#<editor>#LOG               the log's counters: logBytes and logItems (of the deltas counted in them),
 *                                          stateBytes and incarnation as the last fold wrote them; and what changed
 *                                          since the editor's last version (decisions §14): changedAt, firstChangeAt
 *                                          (ms) and authors (a string set); under 1 KB
 *   pk D   sk E#<editor>#PART#<nnnn>       part n (1..parts-1) of the state (binary), stamped with the head's writeId
 *
 * One item holds at most 400 KB, and a state may be larger (docs/decisions.md §8), so the state is cut into parts of
 * 300 KB. The head and every part are written in one transaction; parts beyond the new count are deleted in the
 * same transaction. All items of an editor share the prefix `E#<editor>#` (a segment never contains `#`), so one
 * Query reads an editor, and one Query on D reads every editor of the document. A small state is a single item.
 *
 * The editor's content is the head's state merged with every delta (Yjs updates commute and applying one twice
 * changes nothing, so the order and repeats do not matter). A write first folds: it writes the new state (its own
 * change merged with everything it read, deltas included) with a check of the head's `version`, naming the deltas
 * it folded on the head (`folded`), and deletes them after the transaction commits, in batches (1 write unit each,
 * against 2 inside the transaction). Reads ignore a delta the head names (it is in the state), and so does the
 * counting: a delete that failed, or a crash before it, leaves deltas that change nothing, and the next fold
 * deletes them again (naming them once more until they are gone). When another fold got in first, its change does not fail: it is
 * appended as a delta instead, which conflicts with nothing, and the next fold takes it in. Only a change too large
 * for one item, or one arriving while the deltas already fill MAX_LOG_BYTES, folds again after a jittered backoff.
 *
 * The log's size is kept on its own small item (LOG), not read from the deltas: every append adds to it in the same
 * transaction as the delta, with a condition that keeps the log within MAX_LOG_BYTES and MAX_LOG_ITEMS (a live
 * append that would pass them folds instead, as a REST write does), and every fold subtracts what it deleted. So
 * appending and deciding whether to compact cost one small item each, whatever the size of the state: the head
 * holds up to 300 KB of state, and an update of it would be billed by that size. A delta counted in LOG carries
 * `counted` (deltas written before the counters existed do not). A fold subtracts the deltas it names on the head,
 * which no later fold counts again; any past maxFoldedNamed are deleted in transactions with the counters,
 * each with a condition that it still exists, so no delta is subtracted twice.
 *
 * Reads see no torn state. A Query spanning two 1 MB pages is not isolated from a transaction, so a reader compares
 * each part's `writeId` with the head's and reads again on a mismatch (a random id rather than the version, so
 * that leftovers of an earlier editor can never pass for current parts). Deltas sort before the head and are read
 * before it: a delta a fold deleted before the reader reached it is in the head the reader reads after it, and one
 * the reader saw and the fold then took in is merged twice, which changes nothing. MAX_LOG_BYTES keeps every delta
 * within a read's first page. Deltas carry the incarnation of the editor they were written for (a random id set on
 * creation and kept by every fold), so a delta left behind by an editor that no longer exists is never merged into
 * a new one under the same id.
 *
 * Versions of an editor (decisions §14) live in the same partition under `V#<editor>#` (shared/db/crdt-versions.ts,
 * which builds its keys on crdtDocumentPartition): they sort after every editor's items and move with the document.
 *
 * Every CRDT key is built here, so that moving a document's CRDT data (document migration) and guarding writes
 * (extra condition items in the same transaction) are changes to this module only.
 */
import { randomUUID } from 'node:crypto';
import { AbortedError } from '../core/errors';
import { logger } from '../core/logger';
import { batchWrite, deleteRequest, keyOfItem, type Item, type ItemKey } from './batch';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unlessConditionFails } from './conditional';
import { TABLE_NAME, db } from './client';
import { key, prefix, segment, sortableNumber } from './keys';
import { organizationPartition } from './organization';
import { queryAll, type QuerySpec } from './query';
import { MAX_TRANSACT_ITEMS, named, transactWrite, type TransactItem } from './transact';

export const CRDT_TYPES = ['text', 'map', 'array', 'xml'] as const;
export type CrdtType = (typeof CRDT_TYPES)[number];

/** Bytes of state per item: 300 KB leaves room for the head's other attributes under the 400 KB item limit. */
export const PART_BYTES = 300 * 1024;
/**
 * Largest state stored (11 parts, one transaction well under DynamoDB's 4 MB). Three times the request limit: a
 * Yjs state is larger than its content (about 2.5 times for 1 MiB of XML or of small map entries), and merged
 * updates need room to grow.
 */
export const MAX_STATE_BYTES = 3 * 1024 * 1024;

/** Largest change appended as a delta (one item); a larger one folds, retrying until it gets in. */
export const MAX_DELTA_BYTES = PART_BYTES;
/**
 * Bytes of deltas an editor may hold before writers fold instead of appending: keeps a read's cost close to the
 * state's size, and every delta within the first 1 MB page of a read, before the head.
 */
export const MAX_LOG_BYTES = 512 * 1024;
/**
 * Deltas an editor may hold before writers fold instead of appending: a keystroke's delta is a few dozen bytes of
 * update in an item of about 0.3 KB, so a log of this many costs about 3 MB to read (the largest state's size) even
 * when its bytes of update are far below MAX_LOG_BYTES. Compaction keeps logs far shorter (COMPACT_LOG_ITEMS and
 * compactionBounds); this is the bound when it falls behind.
 */
export const MAX_LOG_ITEMS = 10_000;

const MAX_READ_ATTEMPTS = 5;
/** Folds of one change that only folding can write (see MAX_DELTA_BYTES), spread by full-jitter backoff. */
const MAX_FOLD_ATTEMPTS = 12;
const BACKOFF_BASE_MS = 20;
const BACKOFF_CAP_MS = 1000;

export interface EditorRef {
  organizationId: string;
  documentId: string;
  editorId: string;
}

/** What a writer sets: the new state and who wrote it. */
export interface EditorWrite {
  state: Uint8Array;
  /** ISO 8601. */
  lastUpdate: string;
  lastUpdatedBy: string | null;
}

/** A change appended while another write held the head (see the module comment). */
export interface EditorDelta {
  key: ItemKey;
  /** A Yjs update (V1). */
  update: Uint8Array;
  /** Counted in the editor's LOG item (every delta written since the counters exist). */
  counted?: boolean;
}

/** The editor's LOG item: the size of its log of deltas, and of its state as the last fold wrote it. */
export interface EditorLog {
  /** Bytes of update in the counted deltas. */
  bytes: number;
  /** Counted deltas. */
  items: number;
  /** Bytes of the state; 0 when no fold has written it yet (an editor older than the counters). */
  stateBytes: number;
  /** The incarnation of the editor the last fold or creation wrote; undefined when none has. */
  incarnation?: string;
  /** Changes since the editor's last version (decisions §14): the newest and the oldest (ms), and their authors. */
  changedAt?: number;
  firstChangeAt?: number;
  /** The changedAt the last version covered. */
  versionedAt?: number;
  authors: string[];
  /** A migration marked the LOG item (lockEditorLogs): live appends to the editor are refused. */
  locked?: true;
}

export interface StoredEditor extends EditorRef, EditorWrite {
  type: CrdtType;
  contentKey: string;
  version: number;
  /** Editing sessions are not tracked by this service: always null. */
  sessionId: null;
  /** Set when the editor is created, kept by every fold: which editor under this id a delta belongs to. */
  incarnation: string;
  /** Deltas to merge into `state`: the editor's content is both (`lastUpdate`, `lastUpdatedBy` are the newest). */
  deltas: EditorDelta[];
  /**
   * Deltas the last fold took in (named on the head) that are still stored: their delete after the fold failed or
   * has not run yet. Already in `state` and out of the LOG counters; the next fold deletes them.
   */
  folded?: EditorDelta[];
}

/** What a write of the editor stores: its state, or the deltas of `EditorChange`. */
type EditorHead = Omit<StoredEditor, 'sessionId' | 'deltas'>;

const documentPartition = (apiKeyId: string, organizationId: string, documentId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'CRDT', segment(documentId));
/** The partition of a document's CRDT data, for the versions module (its items under `V#`, see the module comment). */
export const crdtDocumentPartition = documentPartition;
/** Every editor's items (heads, parts, deltas, LOG) begin with this; versions with `V#`. */
const EDITORS_PREFIX = prefix('E');
const editorPrefix = (editorId: string) => prefix('E', segment(editorId));
const headKey = (apiKeyId: string, ref: EditorRef): ItemKey => ({
  pk: documentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key('E', segment(ref.editorId), 'HEAD'),
});
const partKey = (apiKeyId: string, ref: EditorRef, part: number): ItemKey => ({
  pk: documentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key('E', segment(ref.editorId), 'PART', sortableNumber(part, 4)),
});
/** The log's counters: after the head, before the parts (`HEAD` < `LOG` < `PART`). */
const logKey = (apiKeyId: string, ref: EditorRef): ItemKey => ({
  pk: documentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key('E', segment(ref.editorId), 'LOG'),
});
const isLogItem = (item: Item) => typeof item.sk === 'string' && item.sk.endsWith('#LOG');
/** Deltas sort before the head (`DELTA` < `HEAD`), in the order they were written (a timestamp, then a random id). */
const deltaKey = (apiKeyId: string, ref: EditorRef, now: number): ItemKey => ({
  pk: documentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key('E', segment(ref.editorId), 'DELTA', `${sortableNumber(now)}.${randomUUID()}`),
});
/** A delta's id as the head names it among the deltas folded: the random id that ends its sort key (no `.`). */
const deltaId = (delta: Pick<EditorDelta, 'key'>) => delta.key.sk.slice(delta.key.sk.lastIndexOf('.') + 1);
/** Bytes of a delta's id on the head's `folded` (a UUID and a comma). */
const FOLDED_ID_BYTES = 37;
/** What the head may hold besides part 0 of the state and `folded`: its names and other attributes, with margin. */
const HEAD_OTHER_BYTES = 8 * 1024;
/**
 * Most deltas a fold of `state` names on the head: as many as fit beside part 0 under the 400 KB item limit (about
 * 2,600 for a state of 300 KB or more, more than a fold of a 1 MB state takes in). Deltas past it are deleted in
 * transactions with the counters, as deleteFolded does.
 */
export const maxFoldedNamed = (state: Uint8Array) =>
  Math.floor((400 * 1024 - HEAD_OTHER_BYTES - partOf(state, 0).length) / FOLDED_ID_BYTES);

const partCount = (state: Uint8Array) => Math.max(1, Math.ceil(state.length / PART_BYTES));
const partOf = (state: Uint8Array, part: number) => state.subarray(part * PART_BYTES, (part + 1) * PART_BYTES);

/**
 * The head and part items of `editor`'s state, and the deletes of parts an earlier, longer state left. The head
 * is conditional: it must not exist (create), or must still be at the version the change was based on.
 */
/** The editor's head was created or changed by another writer since it was read: its condition failed. */
class HeadChanged extends Error {}

function writeItems(
  apiKeyId: string,
  editor: EditorHead,
  previous?: { version: number; parts: number },
  marks: { compaction?: true } = {},
  taken: readonly EditorDelta[] = [],
  stale: readonly EditorDelta[] = [],
): TransactItem[] {
  // A compaction changes no content: it is no change a version waits for, and has no author.
  const change = marks.compaction === true ? undefined : changeOf(editor);
  const parts = partCount(editor.state);
  const writeId = randomUUID();
  const head: Item = {
    ...headKey(apiKeyId, editor),
    organizationId: editor.organizationId,
    documentId: editor.documentId,
    editorId: editor.editorId,
    type: editor.type,
    contentKey: editor.contentKey,
    version: editor.version,
    writeId,
    incarnation: editor.incarnation,
    parts,
    stateBytes: editor.state.length,
    lastUpdate: editor.lastUpdate,
    lastUpdatedBy: editor.lastUpdatedBy,
    sessionId: null,
    state: partOf(editor.state, 0),
    // The deltas this fold took in (and those an earlier fold took in that are still stored), deleted after it
    // commits: reads ignore them and the next fold deletes them again without counting them (see the module comment).
    ...(taken.length + stale.length === 0 ? {} : { folded: [...taken, ...stale].map(deltaId).join(',') }),
    // A fold that only took the log in (compactEditor): the content did not change, so it is no event.
    ...marks,
  };
  const condition =
    previous === undefined
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : { ConditionExpression: 'version = :previous', ExpressionAttributeValues: { ':previous': previous.version } };
  const items: TransactItem[] = [
    named({ Put: { TableName: TABLE_NAME, Item: head, ...condition } }, () => new HeadChanged()),
  ];
  for (let part = 1; part < parts; part += 1) {
    const item = {
      ...partKey(apiKeyId, editor, part),
      editorId: editor.editorId,
      part,
      writeId,
      state: partOf(editor.state, part),
    };
    items.push({ Put: { TableName: TABLE_NAME, Item: item } });
  }
  for (let part = parts; part < (previous?.parts ?? 0); part += 1) {
    items.push({ Delete: { TableName: TABLE_NAME, Key: partKey(apiKeyId, editor, part) } });
  }
  if (previous === undefined) {
    // A new editor (a new incarnation) has no log: its counters start at zero.
    const log = {
      ...logKey(apiKeyId, editor),
      editorId: editor.editorId,
      incarnation: editor.incarnation,
      stateBytes: editor.state.length,
      logBytes: 0,
      logItems: 0,
      ...(change === undefined
        ? {}
        : {
            changedAt: change.at,
            firstChangeAt: change.at,
            ...(change.by === null ? {} : { authors: new Set([change.by]) }),
          }),
    };
    items.push({ Put: { TableName: TABLE_NAME, Item: log } });
  } else {
    items.push(
      logUpdate(apiKeyId, editor, taken, { stateBytes: editor.state.length, incarnation: editor.incarnation }, change),
    );
  }
  return items;
}

/** A delta a fold took in was deleted by another fold first (its leftovers, see deleteFolded): read again. */
class DeltaGone extends Error {}

/** Deletes of deltas a fold took in, each on condition that it still exists, so that none is subtracted twice. */
function deltaDeletes(deltas: readonly EditorDelta[]): TransactItem[] {
  return deltas.map((delta) =>
    named(
      {
        Delete: { TableName: TABLE_NAME, Key: delta.key, ConditionExpression: 'attribute_exists(pk)' },
      },
      () => new DeltaGone(),
    ),
  );
}

/** A change of content as the LOG item records it for versions: when (ms) and by whom. */
interface ContentChange {
  at: number;
  by: string | null;
}

const changeOf = (write: Pick<EditorWrite, 'lastUpdate' | 'lastUpdatedBy'>): ContentChange => ({
  at: Number.isFinite(Date.parse(write.lastUpdate)) ? Date.parse(write.lastUpdate) : Date.now(),
  by: write.lastUpdatedBy,
});

/**
 * The part of a LOG item's update that records a change of content (decisions §14): its time as changedAt, as
 * firstChangeAt when none is pending, and its author added to the set. Added to the updates every write already
 * makes, so tracking what a version will cover costs no item of its own.
 */
function changeTracking(
  change: ContentChange | undefined,
  values: Record<string, unknown>,
): { set: string; add: string } {
  if (change === undefined) return { set: '', add: '' };
  values[':changedAt'] = change.at;
  if (change.by !== null) values[':author'] = new Set([change.by]);
  return {
    set: ', changedAt = :changedAt, firstChangeAt = if_not_exists(firstChangeAt, :changedAt)',
    add: change.by === null ? '' : ', authors :author',
  };
}

/** The LOG item's update when `deleted` leave the log (and, for a fold, the state's new size). */
function logUpdate(
  apiKeyId: string,
  ref: EditorRef,
  deleted: readonly EditorDelta[],
  fold?: { stateBytes: number; incarnation: string },
  change?: ContentChange,
): TransactItem {
  const counted = deleted.filter((delta) => delta.counted);
  const values: Record<string, unknown> = {
    ':editor': ref.editorId,
    // `|| 0`: no -0 in the request.
    ':bytes': -counted.reduce((sum, delta) => sum + delta.update.length, 0) || 0,
    ':items': -counted.length || 0,
  };
  let set = 'SET editorId = :editor';
  if (fold !== undefined) {
    set += ', stateBytes = :state, incarnation = :incarnation';
    values[':state'] = fold.stateBytes;
    values[':incarnation'] = fold.incarnation;
  }
  const tracked = changeTracking(change, values);
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: logKey(apiKeyId, ref),
      UpdateExpression: `${set}${tracked.set} ADD logBytes :bytes, logItems :items${tracked.add}`,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * The transaction of a fold of `current` into `folded`: the state's items and the LOG item's update, which takes
 * the deltas it folded out of the counters. The deltas it took in are named on the head and deleted after it
 * commits (`named`, with those an earlier fold named that are still stored), in batches: 1 write unit each rather
 * than 2 inside the transaction. Past maxFoldedNamed, the rest are `leftover`, for deleteFolded.
 */
function foldItems(
  apiKeyId: string,
  folded: EditorHead,
  current: StoredEditor,
  marks: { compaction?: true } = {},
): { items: TransactItem[]; named: EditorDelta[]; leftover: EditorDelta[] } {
  const previous = { version: current.version, parts: partCount(current.state) };
  const stale = current.folded ?? [];
  const room = Math.max(0, maxFoldedNamed(folded.state) - stale.length);
  const taken = current.deltas.slice(0, room);
  return {
    items: writeItems(apiKeyId, folded, previous, marks, taken, stale),
    named: [...taken, ...stale],
    leftover: current.deltas.slice(room),
  };
}

/**
 * Deletes the deltas a committed fold named on its head (BatchWriteItem, 1 write unit each). They are in the new
 * state and out of the counters, and reads ignore them, so a delete that fails (or a crash before it) changes
 * nothing but what reads cost until the next fold, which deletes them again.
 */
async function deleteNamed(ref: EditorRef, deltas: readonly EditorDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  try {
    await batchWrite(deltas.map((delta) => deleteRequest(delta.key)));
  } catch (error) {
    logger.info('Folded CRDT deltas left for the next fold.', {
      editorId: ref.editorId,
      left: deltas.length,
      reason: String(error),
    });
  }
}

/**
 * Deletes deltas a fold took in that its transaction had no room for: they are in the new state, so deleting them
 * later changes no content, only what reads cost. Stops (leaving them for the next fold) when another fold deleted
 * one first, or when a write check of the caller's fails (a migration started: the log moves with the document).
 */
async function deleteFolded(
  apiKeyId: string,
  ref: EditorRef,
  deltas: readonly EditorDelta[],
  write: TransactionWriter,
): Promise<void> {
  const perTransaction = MAX_TRANSACT_ITEMS - 2;
  for (let i = 0; i < deltas.length; i += perTransaction) {
    const batch = deltas.slice(i, i + perTransaction);
    try {
      await write([logUpdate(apiKeyId, ref, batch), ...deltaDeletes(batch)]);
    } catch (error) {
      if (!(error instanceof DeltaGone))
        logger.info('Folded CRDT deltas left for the next fold.', {
          editorId: ref.editorId,
          left: deltas.length - i,
          reason: String(error),
        });
      return;
    }
  }
}

/** A binary attribute as the document client returns it (Uint8Array). */
function bytes(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new Error('CRDT state attribute is not binary.');
  return value;
}

/**
 * The editor from its head and the part and delta items read with it, or `torn` when a part is missing or was
 * written by another write than the head (the read overlapped a transaction). Parts at or beyond the head's count
 * are ignored, and so are deltas of another incarnation of the editor.
 */
function assemble(head: Item, parts: readonly Item[], deltaItems: readonly Item[]): StoredEditor | 'torn' {
  const count = Number(head.parts);
  const byIndex = new Map(parts.filter((p) => p.writeId === head.writeId).map((p) => [Number(p.part), bytes(p.state)]));
  const chunks = [bytes(head.state)];
  for (let part = 1; part < count; part += 1) {
    const chunk = byIndex.get(part);
    if (chunk === undefined) return 'torn';
    chunks.push(chunk);
  }
  const state = Buffer.concat(chunks);
  if (state.length !== Number(head.stateBytes)) return 'torn';
  // Heads written before deltas existed have no incarnation; neither have the deltas written for them.
  const incarnation = typeof head.incarnation === 'string' ? head.incarnation : '';
  const ofEditor = deltaItems.filter(
    (item) => (typeof item.incarnation === 'string' ? item.incarnation : '') === incarnation,
  );
  // Deltas the head's fold took in and has not deleted yet: in the state already.
  const foldedIds = new Set(typeof head.folded === 'string' && head.folded !== '' ? head.folded.split(',') : []);
  const isNamed = (item: Item) => foldedIds.has(deltaId({ key: keyOfItem(item) }));
  const deltas = ofEditor.filter((item) => !isNamed(item));
  const toDelta = (item: Item): EditorDelta => ({
    key: keyOfItem(item),
    update: bytes(item.delta),
    counted: item.counted === true,
  });
  // The newest write names the last update; ISO 8601 strings of one format compare in time order.
  const newest = [head, ...deltas].reduce((latest, item) =>
    String(item.lastUpdate) > String(latest.lastUpdate) ? item : latest,
  );
  return {
    organizationId: String(head.organizationId),
    documentId: String(head.documentId),
    editorId: String(head.editorId),
    type: head.type as CrdtType,
    contentKey: String(head.contentKey),
    version: Number(head.version),
    incarnation,
    state: new Uint8Array(state.buffer, state.byteOffset, state.length),
    deltas: deltas.map(toDelta),
    ...(foldedIds.size === 0 ? {} : { folded: ofEditor.filter(isNamed).map(toDelta) }),
    lastUpdate: String(newest.lastUpdate),
    lastUpdatedBy: typeof newest.lastUpdatedBy === 'string' ? newest.lastUpdatedBy : null,
    sessionId: null,
  };
}

/** Groups the items of a document partition (or of one editor) by editor and assembles each. */
function assembleAll(items: readonly Item[]): StoredEditor[] | 'torn' {
  const groups = new Map<string, { head?: Item; parts: Item[]; deltas: Item[] }>();
  for (const item of items) {
    if (isLogItem(item)) continue;
    const editorId = String(item.editorId);
    const group = groups.get(editorId) ?? { parts: [], deltas: [] };
    if (item.delta !== undefined) group.deltas.push(item);
    else if (item.version !== undefined) group.head = item;
    else group.parts.push(item);
    groups.set(editorId, group);
  }
  const editors: StoredEditor[] = [];
  for (const { head, parts, deltas } of groups.values()) {
    // Parts without a head: the read overlapped the transaction that created the editor; it does not exist yet.
    if (head === undefined) continue;
    const editor = assemble(head, parts, deltas);
    if (editor === 'torn') return 'torn';
    editors.push(editor);
  }
  return editors;
}

/** Reads with `query` until the read is not torn. Throws AbortedError when writes keep overlapping the reads. */
async function readEditors(query: Parameters<typeof queryAll>[0]): Promise<StoredEditor[]> {
  for (let attempt = 1; ; attempt += 1) {
    const editors = assembleAll(await queryAll({ ...query, ConsistentRead: true }));
    if (editors !== 'torn') return editors;
    if (attempt >= MAX_READ_ATTEMPTS) throw new AbortedError('The CRDT data kept changing while it was read; retry.');
  }
}

/** One editor (one strongly consistent Query), or undefined when it has no data. */
export async function getEditor(apiKeyId: string, ref: EditorRef): Promise<StoredEditor | undefined> {
  const [editor] = await readEditors({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :editor)',
    ExpressionAttributeValues: {
      ':pk': documentPartition(apiKeyId, ref.organizationId, ref.documentId),
      ':editor': editorPrefix(ref.editorId),
    },
  });
  return editor;
}

/**
 * The editor's incarnation, or undefined when it has no data: one GetItem of its head, projected to that attribute
 * (what a live connection needs to stamp its edits, without reading the state).
 */
export async function editorIncarnation(apiKeyId: string, ref: EditorRef): Promise<string | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: headKey(apiKeyId, ref),
      ConsistentRead: true,
      ProjectionExpression: 'incarnation, version',
    }),
  );
  if (Item === undefined) return undefined;
  return typeof Item.incarnation === 'string' ? Item.incarnation : '';
}

/** Every editor of a document (one strongly consistent Query over the document's partition), in key order. */
export async function listEditors(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
): Promise<StoredEditor[]> {
  return readEditors({
    // The editors' items only: never the versions beside them (`V#`).
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :editors)',
    ExpressionAttributeValues: {
      ':pk': documentPartition(apiKeyId, organizationId, documentId),
      ':editors': EDITORS_PREFIX,
    },
  });
}

export interface NewEditor extends EditorRef, EditorWrite {
  type: CrdtType;
  contentKey: string;
}

/** A writer's change to an editor: the state it makes, and the same change as a Yjs update of its own. */
export interface EditorChange extends EditorWrite {
  /** The whole new state: the current content (deltas included) with the change applied. */
  state: Uint8Array;
  /** Only the change (a Yjs update), appended as a delta when another write holds the head. */
  delta: Uint8Array;
}

/**
 * How a write's transaction is sent: transactWrite, or a caller's wrapper that adds checks of its own after the
 * given items (the document's migration lock) and throws its own errors when they fail.
 */
export type TransactionWriter = (items: TransactItem[]) => Promise<void>;

/**
 * Creates the editor's data, with `also` (e.g. creating its document) in the same transaction. Returns false,
 * writing nothing, when the editor already has data.
 */
export async function createEditor(
  apiKeyId: string,
  editor: NewEditor,
  also: TransactItem[] = [],
  write: TransactionWriter = transactWrite,
): Promise<boolean> {
  try {
    await write([...writeItems(apiKeyId, { ...editor, version: 1, incarnation: randomUUID() }), ...also]);
    return true;
  } catch (error) {
    if (error instanceof HeadChanged) return false;
    throw error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The editor's newest update: the later of the change and what was read (whose deltas the fold takes in). */
function newest(current: StoredEditor, change: EditorWrite): EditorWrite {
  return current.lastUpdate > change.lastUpdate ? current : change;
}

/**
 * Applies `change(current)` to the editor and returns it as this writer sees it afterwards, or undefined when it
 * has no data. The change is folded into the head when the head is still the one read, else appended as a delta
 * (see the module comment), so concurrent writers neither lose nor refuse each other's changes. `change` must be a
 * pure function of the editor it is given (it may run again) and may throw to refuse the write. Throws
 * AbortedError only when a change that must fold (larger than MAX_DELTA_BYTES, or the deltas are full) keeps
 * losing to other folds. `read`, when given, is the editor as the caller just read it, used in place of the first read.
 */
export async function updateEditor(
  apiKeyId: string,
  ref: EditorRef,
  change: (current: StoredEditor) => EditorChange,
  write: TransactionWriter = transactWrite,
  read?: StoredEditor,
): Promise<StoredEditor | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    // `read`: the editor as the caller read it a moment ago, for the first attempt (a head changed since is a lost race).
    const current = attempt === 1 && read !== undefined ? read : await getEditor(apiKeyId, ref);
    if (current === undefined) return undefined;
    const next = change(current);
    const { lastUpdate, lastUpdatedBy } = newest(current, next);
    const folded: StoredEditor = {
      ...current,
      state: next.state,
      deltas: [],
      folded: [],
      lastUpdate,
      lastUpdatedBy,
      version: current.version + 1,
    };
    // Deltas folded in are deleted with the write, as many as the transaction holds, the rest right after it (they
    // are in the new state too, and merging them again changes nothing).
    const { items, named: foldedNamed, leftover } = foldItems(apiKeyId, folded, current);
    try {
      await write(items);
      await deleteNamed(ref, foldedNamed);
      await deleteFolded(apiKeyId, ref, leftover, write);
      return folded;
    } catch (error) {
      if (error instanceof DeltaGone && attempt < MAX_FOLD_ATTEMPTS) continue;
      if (!(error instanceof HeadChanged)) throw error;
    }
    // Another write folded first. The change commutes with it: append it, unless it must fold (too large for one
    // item, or the log is full).
    if (
      next.delta.length <= MAX_DELTA_BYTES &&
      (await appendDelta(
        apiKeyId,
        ref,
        current.incarnation,
        { update: next.delta, lastUpdate: next.lastUpdate, lastUpdatedBy: next.lastUpdatedBy },
        write,
        Date.now(),
      ))
    ) {
      return { ...current, state: next.state, deltas: [], lastUpdate, lastUpdatedBy };
    }
    if (attempt >= MAX_FOLD_ATTEMPTS)
      throw new AbortedError('The CRDT data was changed concurrently too often; retry.');
    await sleep(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt));
  }
}

/**
 * Bounds of an editor's log of deltas past which compaction folds it into the state (see compactEditor), for a
 * small state. A fold reads the state and writes it again (in a transaction: 2 WCU per KB), so for a larger state
 * the bounds grow with it (compactionBounds): a fold then comes every COMPACT_STATE_BYTES_PER_ITEM bytes of state
 * in deltas, which spreads its cost over the edits it takes in at about 1 WCU and 0.13 RCU each, whatever the size.
 */
export const COMPACT_LOG_BYTES = 64 * 1024;
export const COMPACT_LOG_ITEMS = 100;
export const COMPACT_STATE_BYTES_PER_ITEM = 512;

/** The log sizes past which compaction folds an editor whose state has `stateBytes` (see COMPACT_LOG_BYTES). */
export function compactionBounds(stateBytes: number): { bytes: number; items: number } {
  return {
    // At most half the hard bound, so appends rarely meet MAX_LOG_BYTES before compaction folds.
    bytes: Math.min(MAX_LOG_BYTES / 2, Math.max(COMPACT_LOG_BYTES, Math.floor(stateBytes / 4))),
    items: Math.min(
      MAX_LOG_ITEMS / 2,
      Math.max(COMPACT_LOG_ITEMS, Math.floor(stateBytes / COMPACT_STATE_BYTES_PER_ITEM)),
    ),
  };
}

/** Whether the editor's log has grown past the bounds that compaction keeps it under. */
export function logNeedsCompaction(log: Pick<EditorLog, 'bytes' | 'items' | 'stateBytes'>): boolean {
  const bounds = compactionBounds(log.stateBytes);
  return log.items > bounds.items || log.bytes > bounds.bytes;
}

/** The log's size as read from the deltas themselves (an editor older than its LOG item). */
function logOfDeltas(editor: StoredEditor): EditorLog {
  return {
    bytes: editor.deltas.reduce((sum, delta) => sum + delta.update.length, 0),
    items: editor.deltas.length,
    stateBytes: editor.state.length,
    authors: [],
  };
}

/**
 * The editor's LOG item (one strongly consistent GetItem of an item under 1 KB: 1 RCU), or undefined when it has
 * none (no editor, or one written before the counters existed).
 */
export async function editorLog(apiKeyId: string, ref: EditorRef): Promise<EditorLog | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: logKey(apiKeyId, ref), ConsistentRead: true }),
  );
  if (Item === undefined) return undefined;
  return {
    bytes: Number(Item.logBytes ?? 0),
    items: Number(Item.logItems ?? 0),
    stateBytes: Number(Item.stateBytes ?? 0),
    ...(typeof Item.incarnation === 'string' ? { incarnation: Item.incarnation } : {}),
    ...(typeof Item.changedAt === 'number' ? { changedAt: Item.changedAt } : {}),
    ...(typeof Item.firstChangeAt === 'number' ? { firstChangeAt: Item.firstChangeAt } : {}),
    ...(typeof Item.versionedAt === 'number' ? { versionedAt: Item.versionedAt } : {}),
    authors: Item.authors instanceof Set ? [...(Item.authors as Set<string>)].sort() : [],
    ...(Item.locked === undefined ? {} : { locked: true as const }),
  };
}

/**
 * A transaction's check that the editor did not change since `changedAt` was read from its LOG item (none: it has
 * not changed at all), failing with `failure`.
 */
export function editorUnchangedCheck(
  apiKeyId: string,
  ref: EditorRef,
  changedAt: number | undefined,
  failure: () => Error,
): TransactItem {
  return named(
    {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: logKey(apiKeyId, ref),
        ...(changedAt === undefined
          ? { ConditionExpression: 'attribute_not_exists(changedAt)' }
          : { ConditionExpression: 'changedAt = :seen', ExpressionAttributeValues: { ':seen': changedAt } }),
      },
    },
    failure,
  );
}

/**
 * Records that a version now covers the changes `taken` (as editorLog read them): its authors leave the set (an
 * author added since stays), and firstChangeAt goes when no change came since, else becomes the newest change's
 * time (the oldest unversioned change is at most that old). One small UpdateItem, two when a change came between.
 */
export async function markVersioned(
  apiKeyId: string,
  ref: EditorRef,
  taken: Pick<EditorLog, 'changedAt' | 'authors'>,
): Promise<void> {
  const values: Record<string, unknown> = { ':seen': taken.changedAt ?? 0 };
  const del = taken.authors.length === 0 ? '' : ' DELETE authors :taken';
  if (taken.authors.length > 0) values[':taken'] = new Set(taken.authors);
  const update = (expression: string, condition?: string) =>
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: logKey(apiKeyId, ref),
        UpdateExpression: `${expression}${del}`,
        ExpressionAttributeValues: values,
        ...(condition === undefined ? {} : { ConditionExpression: condition }),
      }),
    );
  const unchanged = await unlessConditionFails(
    update(
      'SET versionedAt = :seen REMOVE firstChangeAt',
      'attribute_exists(pk) AND (attribute_not_exists(changedAt) OR changedAt = :seen)',
    ).then(() => true),
  );
  if (unchanged === undefined)
    await unlessConditionFails(
      update('SET versionedAt = :seen, firstChangeAt = changedAt', 'attribute_exists(changedAt)'),
    );
}

/**
 * Folds the editor's log into its state when it has grown past the bounds: decided from the LOG item alone, so a
 * log within them costs one small read whatever the size of the state; only a fold reads the whole editor. The fold
 * is one write of the merged state (`merge` of what was read) checked against the head's version, deleting the
 * deltas it took in (those one transaction has no room for right after). Returns whether it folded: false when the
 * editor has no data, its log is within the bounds, or another write changed the head first (a write that folds
 * takes the log in too).
 */
export async function compactEditor(
  apiKeyId: string,
  ref: EditorRef,
  merge: (editor: StoredEditor) => Uint8Array,
  write: TransactionWriter = transactWrite,
): Promise<boolean> {
  const log = await editorLog(apiKeyId, ref);
  if (log !== undefined && !logNeedsCompaction(log)) return false;
  const current = await getEditor(apiKeyId, ref);
  if (current === undefined || current.deltas.length === 0) return false;
  if (log === undefined && !logNeedsCompaction(logOfDeltas(current))) return false;
  const folded: EditorHead = { ...current, state: merge(current), version: current.version + 1 };
  const { items, named: foldedNamed, leftover } = foldItems(apiKeyId, folded, current, { compaction: true });
  try {
    await write(items);
  } catch (error) {
    if (error instanceof HeadChanged || error instanceof DeltaGone) return false;
    throw error;
  }
  await deleteNamed(ref, foldedNamed);
  await deleteFolded(apiKeyId, ref, leftover, write);
  return true;
}

/**
 * The LOG item's condition failed: the log is full, the LOG item is of another incarnation of the editor, is locked
 * by a migration, or does not exist (an editor older than the counters, or one a migration moved away).
 */
class LogRefused extends Error {}

/** What a live append checks of the LOG item besides the log's size: that it exists and no migration locked it. */
const LOG_UNLOCKED = 'attribute_exists(pk) AND attribute_not_exists(locked)';

/**
 * Appends a change as one counted delta: the delta and the LOG item's counters in one transaction (through `write`,
 * which adds the caller's checks), on condition that the log stays within MAX_LOG_BYTES and MAX_LOG_ITEMS. Returns
 * false, writing nothing, when it would not; true when appended. A change for an editor that was replaced under the
 * same id since `incarnation` was read is appended uncounted, as before the counters: it is never merged.
 */
async function appendDelta(
  apiKeyId: string,
  ref: EditorRef,
  incarnation: string,
  change: { update: Uint8Array; lastUpdate: string; lastUpdatedBy: string | null },
  write: TransactionWriter,
  now: number,
): Promise<boolean> {
  const delta: Item = {
    ...deltaKey(apiKeyId, ref, now),
    // Named so the events worker knows whose editor changed (shared/domain/webhooks/events.ts).
    organizationId: ref.organizationId,
    documentId: ref.documentId,
    editorId: ref.editorId,
    incarnation,
    delta: change.update,
    lastUpdate: change.lastUpdate,
    lastUpdatedBy: change.lastUpdatedBy,
  };
  const values: Record<string, unknown> = {
    ':editor': ref.editorId,
    ':bytes': change.update.length,
    ':one': 1,
    ':incarnation': incarnation,
    ':room': MAX_LOG_BYTES - change.update.length,
    ':items': MAX_LOG_ITEMS,
  };
  const tracked = changeTracking(changeOf(change), values);
  const counter = named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: logKey(apiKeyId, ref),
        UpdateExpression: `SET editorId = :editor${tracked.set} ADD logBytes :bytes, logItems :one${tracked.add}`,
        // The LOG item must exist and be unlocked: a migration marks it locked before it reads the editor to copy
        // it (lockEditorLogs), so this condition alone keeps an append from landing after that read.
        ConditionExpression: `${LOG_UNLOCKED} AND (attribute_not_exists(incarnation) OR incarnation = :incarnation) AND (attribute_not_exists(logBytes) OR logBytes <= :room) AND (attribute_not_exists(logItems) OR logItems < :items)`,
        ExpressionAttributeValues: values,
      },
    },
    () => new LogRefused(),
  );
  try {
    await write([{ Put: { TableName: TABLE_NAME, Item: { ...delta, counted: true } } }, counter]);
    return true;
  } catch (error) {
    if (!(error instanceof LogRefused)) throw error;
  }
  // Rare: find out which part of the condition failed (one small read). A locked or missing LOG item, a full log:
  // the caller folds, and the fold's own check of the document's lock refuses it during a migration.
  const log = await editorLog(apiKeyId, ref);
  if (log === undefined || log.locked || log.incarnation === undefined || log.incarnation === incarnation) return false;
  try {
    await write([
      { Put: { TableName: TABLE_NAME, Item: delta } },
      named(
        { ConditionCheck: { TableName: TABLE_NAME, Key: logKey(apiKeyId, ref), ConditionExpression: LOG_UNLOCKED } },
        () => new LogRefused(),
      ),
    ]);
    return true;
  } catch (error) {
    if (error instanceof LogRefused) return false;
    throw error;
  }
}

/**
 * Appends one Yjs update to the editor's log (a live edit): the delta and the log's counters, no read of the editor.
 * `incarnation` is the editor's, as read when the connection opened: an update for an editor that was since replaced
 * under the same id is never merged into the new one. The append needs no check of the document's migration lock:
 * a migration locks the LOG item, which the append updates anyway, before it reads the editor (lockEditorLogs).
 * Returns false, writing nothing, when the log is full (MAX_LOG_BYTES, MAX_LOG_ITEMS), the LOG item is locked or
 * missing: the caller then folds the update into the state (updateEditor) with the document's lock check, as a REST
 * write does, so the log stays bounded, nothing is lost, and a migration refuses the edit.
 */
export async function appendEditorUpdate(
  apiKeyId: string,
  ref: EditorRef,
  incarnation: string,
  change: { update: Uint8Array; lastUpdate: string; lastUpdatedBy: string | null },
  write: TransactionWriter = transactWrite,
  now = Date.now(),
): Promise<boolean> {
  if (change.update.length > MAX_DELTA_BYTES)
    throw new Error(`A live update is at most ${MAX_DELTA_BYTES} bytes; fold larger ones.`);
  return appendDelta(apiKeyId, ref, incarnation, change, write, now);
}

/** Every item (heads, parts and deltas) of a document's CRDT partition: what document migration moves. */
export function documentCrdtQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': documentPartition(apiKeyId, organizationId, documentId) },
    ConsistentRead: true,
  };
}

/** The LOG items of a document's editors (keys only), optionally only those `migrationId` locked. */
async function logItemKeys(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  migrationId?: string,
): Promise<ItemKey[]> {
  const values: Record<string, unknown> = {
    ':pk': documentPartition(apiKeyId, organizationId, documentId),
    ':editors': EDITORS_PREFIX,
  };
  if (migrationId !== undefined) values[':migration'] = migrationId;
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :editors)',
    // Every LOG item has the counters (created with them, and appends and folds add to them).
    FilterExpression: migrationId === undefined ? 'attribute_exists(logBytes)' : 'locked = :migration',
    ProjectionExpression: 'pk, sk',
    ExpressionAttributeValues: values,
    ConsistentRead: true,
  });
  return items.filter(isLogItem).map(keyOfItem);
}

const TRANSACTION_CONFLICT_ATTEMPTS = 10;

/** Sends `update`, again when it met a transaction in flight on the item (an append), with a jittered backoff. */
async function sendPastConflicts(update: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await unlessConditionFails(update());
      return;
    } catch (error) {
      if ((error as Error).name !== 'TransactionConflictException' || attempt >= TRANSACTION_CONFLICT_ATTEMPTS)
        throw error;
      await sleep(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt));
    }
  }
}

/**
 * Marks every editor's LOG item of the document locked by `migrationId` (decisions §5): from then on a live append
 * to it fails its condition (LOG_UNLOCKED). The migration calls it after taking the document's lock and before it
 * reads the CRDT data to copy it, so every append either landed before (and is copied) or is refused. An editor
 * without a LOG item needs no mark: an append needs the item, and only a write that checks the document's lock
 * creates it. One UpdateItem per editor; running it again changes nothing.
 */
export async function lockEditorLogs(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  migrationId: string,
): Promise<void> {
  for (const logItem of await logItemKeys(apiKeyId, organizationId, documentId)) {
    await sendPastConflicts(() =>
      db.send(
        new UpdateCommand({
          TableName: TABLE_NAME,
          Key: logItem,
          UpdateExpression: 'SET locked = :migration',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':migration': migrationId },
        }),
      ),
    );
  }
}

/** Takes `migrationId`'s mark off the document's LOG items again (a migration that failed: the data stays). */
export async function unlockEditorLogs(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  migrationId: string,
): Promise<void> {
  for (const logItem of await logItemKeys(apiKeyId, organizationId, documentId, migrationId)) {
    await sendPastConflicts(() =>
      db.send(
        new UpdateCommand({
          TableName: TABLE_NAME,
          Key: logItem,
          UpdateExpression: 'REMOVE locked',
          ConditionExpression: 'locked = :migration',
          ExpressionAttributeValues: { ':migration': migrationId },
        }),
      ),
    );
  }
}

/**
 * A CRDT head, part, delta or LOG item as it is under another document id (same editor, state bytes and write id);
 * a LOG item moves without the migration's lock.
 */
export function crdtItemMovedTo(apiKeyId: string, item: Item, organizationId: string, documentId: string): Item {
  const { locked: _locked, ...unlocked } = item;
  return {
    ...unlocked,
    pk: documentPartition(apiKeyId, organizationId, documentId),
    ...(item.documentId === undefined ? {} : { documentId }),
    // A version's summary moved is no new version (no crdt.version_created event).
    ...(typeof item.versionId === 'string' ? { migrated: true } : {}),
  };
}
