/**
 * Reading CRDT editor data (docs/api-spec.md "Get CRDT Data", docs/decisions.md §8): the records of Get, and one
 * editor as the webhook worker presents it. Apart from the writes (operations.ts) so that a reader's bundle carries
 * neither the write path nor the live connections' client it relays through.
 */
import { ServiceError } from '../../core/errors';
import { getEditor, listEditors, type StoredEditor } from '../../db/crdt';
import { editorState, readContent, type CrdtContent, type CrdtValue } from './yjs-state';

/**
 * A Lambda response holds at most 6 MB, and carries the body as a JSON string (escaped once more): records whose
 * twice-encoded form exceeds this would fail in AWS, so they are refused everywhere.
 */
const MAX_RESPONSE_BYTES = 6_000_000;

/** The record of Get CRDT Data in `format: 'json'`: the plain value and who changed it when. */
export interface CrdtJsonRecord {
  data: CrdtValue;
  id: string;
  lastUpdate: string;
  lastUpdatedBy: string | null;
  sessionId: null;
}

/** With `format: 'yjs'`, the record adds the Yjs state (base64), the type (which `data` matches) and the contentKey. */
export type CrdtYjsRecord = Omit<CrdtJsonRecord, 'data'> & CrdtContent & { state: string; contentKey: string };

export type CrdtRecord = CrdtJsonRecord | CrdtYjsRecord;

function toRecord(editor: StoredEditor, format: 'json' | 'yjs'): CrdtRecord {
  const state = editorState(editor);
  const content = readContent(state, editor.type, editor.contentKey);
  const record: CrdtJsonRecord = {
    data: content.data,
    id: editor.editorId,
    lastUpdate: editor.lastUpdate,
    lastUpdatedBy: editor.lastUpdatedBy,
    sessionId: editor.sessionId,
  };
  if (format === 'json') return record;
  // `content` spread after `state` adds `type` there and leaves `data` first, where the record has it.
  return { ...record, state: Buffer.from(state).toString('base64'), ...content, contentKey: editor.contentKey };
}

/**
 * The CRDT data of one editor (an empty array when it has none) or of every editor of the document. Throws
 * ServiceError OUT_OF_RANGE when the records would not fit a response.
 */
export async function getCrdtData(
  apiKeyId: string,
  input: { organizationId: string; documentId: string; editorId?: string; format?: 'json' | 'yjs' },
): Promise<CrdtRecord[]> {
  const { organizationId, documentId, editorId } = input;
  const editors = editorId === undefined
    ? await listEditors(apiKeyId, organizationId, documentId)
    : [await getEditor(apiKeyId, { organizationId, documentId, editorId })].filter((editor) => editor !== undefined);
  const records = editors.map((editor) => toRecord(editor, input.format ?? 'json'));
  if (Buffer.byteLength(JSON.stringify(JSON.stringify(records))) > MAX_RESPONSE_BYTES) {
    throw new ServiceError('OUT_OF_RANGE', 'The CRDT data requested exceeds the response size limit; read one editor at a time, in format json.');
  }
  return records;
}
/** One editor as Get CRDT Data returns it in format json, with its head version; undefined when it has none. */
export async function readEditorRecord(apiKeyId: string, ref: { organizationId: string; documentId: string; editorId: string }): Promise<CrdtJsonRecord | undefined> {
  const editor = await getEditor(apiKeyId, ref);
  return editor === undefined ? undefined : (toRecord(editor, 'json') as CrdtJsonRecord);
}
