/**
 * CRDT editor data: the Yjs document state of each editor of a document, in one partition per document
 * (D = T#<key>#ORG#<org>#CRDT#<doc>):
 *
 *   pk D   sk E#<editor>#HEAD          head: type, contentKey, version, writeId, parts, stateBytes, lastUpdate,
 *                                      lastUpdatedBy, sessionId, and part 0 of the state (binary)
 *   pk D   sk E#<editor>#PART#<nnnn>   part n (1..parts-1) of the state (binary), stamped with the head's writeId
 *
 * One item holds at most 400 KB, and a state may be larger (decisions §8), so the state is cut into parts of
 * 300 KB. The head and every part are written in one transaction; parts beyond the new count are deleted in the
 * same transaction. All items of an editor share the prefix `E#<editor>#` (a segment never contains `#`), so one
 * Query reads an editor, and one Query on D reads every editor of the document. A small state is a single item.
 *
 * Writers check `version` (optimistic concurrency): a write based on a stale state fails its condition and the
 * caller's change is re-applied to the state it failed against. A Query spanning two 1 MB pages is not isolated
 * from a transaction, so a reader compares each part's `writeId` with the head's and reads again on a mismatch
 * (a random id rather than the version, so that leftovers of an earlier editor can never pass for current parts).
 *
 * Every CRDT key is built here, so that moving a document's CRDT data (document migration) and guarding writes
 * (extra condition items in the same transaction) are changes to this module only.
 */
import { randomUUID } from 'node:crypto';
import { AbortedError } from '../http/errors';
import type { Item, ItemKey } from './batch';
import { TABLE_NAME } from './client';
import { key, prefix, segment } from './keys';
import { organizationPartition } from './organization';
import { queryAll, type QuerySpec } from './query';
import { TransactionCancelledError, transactWrite, type TransactItem } from './transact';

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

const MAX_READ_ATTEMPTS = 5;
const MAX_WRITE_ATTEMPTS = 10;

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

export interface StoredEditor extends EditorRef, EditorWrite {
  type: CrdtType;
  contentKey: string;
  version: number;
  /** Editing sessions are not tracked by this service: always null. */
  sessionId: null;
}

const documentPartition = (apiKeyId: string, organizationId: string, documentId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'CRDT', segment(documentId));
const editorPrefix = (editorId: string) => prefix('E', segment(editorId));
const headKey = (apiKeyId: string, ref: EditorRef): ItemKey => ({
  pk: documentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key('E', segment(ref.editorId), 'HEAD'),
});
const partKey = (apiKeyId: string, ref: EditorRef, part: number): ItemKey => ({
  pk: documentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key('E', segment(ref.editorId), 'PART', String(part).padStart(4, '0')),
});

const partCount = (state: Uint8Array) => Math.max(1, Math.ceil(state.length / PART_BYTES));
const partOf = (state: Uint8Array, part: number) => state.subarray(part * PART_BYTES, (part + 1) * PART_BYTES);

/**
 * The head and part items of `editor`'s state, and the deletes of parts an earlier, longer state left. The head
 * is conditional: it must not exist (create), or must still be at the version the change was based on.
 */
function writeItems(
  apiKeyId: string,
  editor: Omit<StoredEditor, 'sessionId'>,
  previous?: { version: number; parts: number },
): TransactItem[] {
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
    parts,
    stateBytes: editor.state.length,
    lastUpdate: editor.lastUpdate,
    lastUpdatedBy: editor.lastUpdatedBy,
    sessionId: null,
    state: partOf(editor.state, 0),
  };
  const condition = previous === undefined
    ? { ConditionExpression: 'attribute_not_exists(pk)' }
    : { ConditionExpression: 'version = :previous', ExpressionAttributeValues: { ':previous': previous.version } };
  const items: TransactItem[] = [{ Put: { TableName: TABLE_NAME, Item: head, ...condition } }];
  for (let part = 1; part < parts; part += 1) {
    const item = { ...partKey(apiKeyId, editor, part), editorId: editor.editorId, part, writeId, state: partOf(editor.state, part) };
    items.push({ Put: { TableName: TABLE_NAME, Item: item } });
  }
  for (let part = parts; part < (previous?.parts ?? 0); part += 1) {
    items.push({ Delete: { TableName: TABLE_NAME, Key: partKey(apiKeyId, editor, part) } });
  }
  return items;
}

/** A binary attribute as the document client returns it (Uint8Array). */
function bytes(value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new Error('CRDT state attribute is not binary.');
  return value;
}

/**
 * The editor from its head and the part items read with it, or `torn` when a part is missing or was written by
 * another write than the head (the read overlapped a transaction). Parts at or beyond the head's count are ignored.
 */
function assemble(head: Item, parts: readonly Item[]): StoredEditor | 'torn' {
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
  return {
    organizationId: String(head.organizationId),
    documentId: String(head.documentId),
    editorId: String(head.editorId),
    type: head.type as CrdtType,
    contentKey: String(head.contentKey),
    version: Number(head.version),
    state: new Uint8Array(state.buffer, state.byteOffset, state.length),
    lastUpdate: String(head.lastUpdate),
    lastUpdatedBy: typeof head.lastUpdatedBy === 'string' ? head.lastUpdatedBy : null,
    sessionId: null,
  };
}

/** Groups the items of a document partition (or of one editor) by editor and assembles each. */
function assembleAll(items: readonly Item[]): StoredEditor[] | 'torn' {
  const groups = new Map<string, { head?: Item; parts: Item[] }>();
  for (const item of items) {
    const editorId = String(item.editorId);
    const group = groups.get(editorId) ?? { parts: [] };
    if (item.version !== undefined) group.head = item;
    else group.parts.push(item);
    groups.set(editorId, group);
  }
  const editors: StoredEditor[] = [];
  for (const { head, parts } of groups.values()) {
    // Parts without a head: the read overlapped the transaction that created the editor; it does not exist yet.
    if (head === undefined) continue;
    const editor = assemble(head, parts);
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

/** Every editor of a document (one strongly consistent Query over the document's partition), in key order. */
export async function listEditors(apiKeyId: string, organizationId: string, documentId: string): Promise<StoredEditor[]> {
  return readEditors({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': documentPartition(apiKeyId, organizationId, documentId) },
  });
}

export interface NewEditor extends EditorRef, EditorWrite {
  type: CrdtType;
  contentKey: string;
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
    await write([...writeItems(apiKeyId, { ...editor, version: 1 }), ...also]);
    return true;
  } catch (error) {
    if (error instanceof TransactionCancelledError && error.failed(0)) return false;
    throw error;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Replaces the editor's state with `change(current)`, re-reading and re-applying `change` whenever another write
 * got in first, so concurrent writers never lose each other's changes. `change` must be a pure function of the
 * editor it is given (it may run several times) and may throw to refuse the write. Returns the editor as written,
 * or undefined when it has no data. Throws AbortedError when conflicts persist.
 */
export async function updateEditor(
  apiKeyId: string,
  ref: EditorRef,
  change: (current: StoredEditor) => EditorWrite,
  write: TransactionWriter = transactWrite,
): Promise<StoredEditor | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    const current = await getEditor(apiKeyId, ref);
    if (current === undefined) return undefined;
    const next: StoredEditor = { ...current, ...change(current), version: current.version + 1 };
    try {
      await write(writeItems(apiKeyId, next, { version: current.version, parts: partCount(current.state) }));
      return next;
    } catch (error) {
      if (!(error instanceof TransactionCancelledError && error.failed(0))) throw error;
      if (attempt >= MAX_WRITE_ATTEMPTS) throw new AbortedError('The CRDT data was changed concurrently too often; retry.');
      await sleep(Math.random() * Math.min(500, 10 * 2 ** attempt));
    }
  }
}

/** Every item (heads and parts) of a document's CRDT partition: what document migration moves. */
export function documentCrdtQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': documentPartition(apiKeyId, organizationId, documentId) },
    ConsistentRead: true,
  };
}

/** A CRDT head or part as it is under another document id (same editor, state bytes and write id). */
export function crdtItemMovedTo(apiKeyId: string, item: Item, organizationId: string, documentId: string): Item {
  return {
    ...item,
    pk: documentPartition(apiKeyId, organizationId, documentId),
    ...(item.documentId === undefined ? {} : { documentId }),
  };
}
