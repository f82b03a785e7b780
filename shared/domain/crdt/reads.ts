/**
 * Reading CRDT editor data (docs/api-spec.md "Get CRDT Data", docs/decisions.md §8): the records of Get, and one
 * editor as the webhook worker presents it. Apart from the writes (operations.ts) so that a reader's bundle carries
 * neither the write path nor the live connections' client it relays through.
 */
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, ServiceError } from '../../core/errors';
import { getEditor, listEditors, type EditorRef, type StoredEditor } from '../../db/crdt';
import { getVersion, readVersionState, type Version, type VersionedEditor } from '../../db/crdt-versions';
import type { JsonValue } from './json-value';
import { checkReadFormat, isReadableXmlFormat, type ReadFormat } from './format-rules';
import type { LoadFormats } from './formats/index';
import { editorState, readContent, textDelta, type CrdtContent, type CrdtValue } from './yjs-state';

/**
 * A Lambda response holds at most 6 MB, and carries the body as a JSON string (escaped once more): records whose
 * twice-encoded form exceeds this would fail in AWS, so they are refused everywhere.
 */
const MAX_RESPONSE_BYTES = 6_000_000;

/**
 * The record of Get CRDT Data in `format: 'json'`: the plain value and who changed it when. In the readable formats
 * (decisions §15) `data` is the content in that format: ProseMirror JSON, HTML, Markdown or text, or a text's delta.
 */
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

/** Converts an xml editor's state to a readable format (formats/, loaded only by the functions that convert). */
type XmlRenderer = Awaited<ReturnType<LoadFormats>>['renderXml'];

/** The content of an editor in `format` (one that fits its type, see checkReadFormat): Get's `data`. */
function formatted(
  editor: StoredEditor,
  state: Uint8Array,
  format: ReadFormat,
  renderXml: XmlRenderer | undefined,
): CrdtValue {
  if (format === 'delta') return textDelta(state, editor.contentKey) as JsonValue[];
  if (!isReadableXmlFormat(format) || renderXml === undefined)
    return readContent(state, editor.type, editor.contentKey).data;
  try {
    return renderXml(state, editor.contentKey, format);
  } catch (error) {
    // A stored fragment holds what a client wrote; one that no ProseMirror document can hold (text embeds, say) is
    // the content's condition, not a server fault.
    throw new FailedPreconditionError(
      `Editor ${editor.editorId} cannot be read in format ${format}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function toRecord(editor: StoredEditor, format: ReadFormat, renderXml?: XmlRenderer): CrdtRecord {
  const state = editorState(editor);
  if (format !== 'json' && format !== 'yjs') {
    return {
      data: formatted(editor, state, format, renderXml),
      id: editor.editorId,
      lastUpdate: editor.lastUpdate,
      lastUpdatedBy: editor.lastUpdatedBy,
      sessionId: editor.sessionId,
    };
  }
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

export const VERSION_NOT_FOUND = 'Version not found.';

/** A version's summary and state; throws NotFoundError (`Version not found.`) when the editor has no such version. */
export async function versionWithState(
  apiKeyId: string,
  ref: EditorRef,
  versionId: string,
): Promise<{ version: Version & { editor: VersionedEditor }; state: Uint8Array }> {
  const version = await getVersion(apiKeyId, ref, versionId);
  const state = version === undefined ? undefined : await readVersionState(apiKeyId, ref, version);
  if (version === undefined || state === undefined) throw new NotFoundError(VERSION_NOT_FOUND);
  return { version, state };
}

/**
 * The editor as it was at a version (decisions §14): the version's state, with the type, contentKey and last update
 * the editor had then. Throws NotFoundError (`Version not found.`) when the editor has no such version.
 */
async function editorAtVersion(apiKeyId: string, ref: EditorRef, versionId: string): Promise<StoredEditor> {
  const { version, state } = await versionWithState(apiKeyId, ref, versionId);
  return { ...ref, ...version.editor, state, deltas: [], version: 0, incarnation: '', sessionId: null };
}

/**
 * The CRDT data of one editor (an empty array when it has none) or of every editor of the document, in `format`
 * (decisions §15; default `json`); with `versionId`, the editor as it was at that version (decisions §14). The readable xml formats need `loadFormats` (the caller's dynamic import of
 * formats/). Throws InvalidArgumentError when an editor's type has no such format (`Format html is not available
 * for type text.`), FailedPreconditionError when stored xml content cannot be converted, ServiceError OUT_OF_RANGE
 * when the records would not fit a response.
 */
export async function getCrdtData(
  apiKeyId: string,
  input: { organizationId: string; documentId: string; editorId?: string; format?: ReadFormat; versionId?: string },
  loadFormats?: LoadFormats,
): Promise<CrdtRecord[]> {
  const { organizationId, documentId, editorId } = input;
  const format = input.format ?? 'json';
  let editors: StoredEditor[];
  if (input.versionId !== undefined) {
    if (editorId === undefined) throw new InvalidArgumentError('editorId is required with versionId.');
    editors = [await editorAtVersion(apiKeyId, { organizationId, documentId, editorId }, input.versionId)];
  } else {
    editors =
      editorId === undefined
        ? await listEditors(apiKeyId, organizationId, documentId)
        : [await getEditor(apiKeyId, { organizationId, documentId, editorId })].filter(
            (editor) => editor !== undefined,
          );
  }
  for (const editor of editors) checkReadFormat(editor.type, format);
  if (isReadableXmlFormat(format) && editors.length > 0 && loadFormats === undefined)
    throw new Error(`Format ${format} needs the formats module.`);
  const renderXml = isReadableXmlFormat(format) && editors.length > 0 ? (await loadFormats!()).renderXml : undefined;
  const records = editors.map((editor) => toRecord(editor, format, renderXml));
  if (Buffer.byteLength(JSON.stringify(JSON.stringify(records))) > MAX_RESPONSE_BYTES) {
    throw new ServiceError(
      'OUT_OF_RANGE',
      'The CRDT data requested exceeds the response size limit; read one editor at a time, in format json.',
    );
  }
  return records;
}
/** One editor as Get CRDT Data returns it in format json, with its head version; undefined when it has none. */
export async function readEditorRecord(
  apiKeyId: string,
  ref: { organizationId: string; documentId: string; editorId: string },
): Promise<CrdtJsonRecord | undefined> {
  const editor = await getEditor(apiKeyId, ref);
  return editor === undefined ? undefined : (toRecord(editor, 'json') as CrdtJsonRecord);
}
