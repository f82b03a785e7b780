/**
 * CRDT editor data (docs/api-spec.md "CRDT data", docs/decisions.md §8): Add and Update (Get is in reads.ts),
 * composing the input rules (input-rules.ts) and the pure Yjs functions (yjs-state.ts) with storage
 * (shared/db/crdt.ts); both send what they wrote to the editor's open live connections (decisions §13).
 *
 * Rules where the contract is silent (also in docs/project-decisions.md):
 * - An Update with `data` replaces the content through Yjs operations (see yjs-state.ts), so concurrent client
 *   edits elsewhere in the content survive.
 * - Concurrent updates of one editor never fail: they merge as concurrent Yjs edits (see updateCrdtData).
 */
import {
  MAX_STATE_BYTES,
  createEditor,
  updateEditor,
  type CrdtType,
  type EditorRef,
  type StoredEditor,
  type TransactionWriter,
} from '../../db/crdt';
import { ensureOrganizationItem, getDocument, upsertDocumentItem } from '../../db/organization';
import { AlreadyExistsError, InvalidArgumentError, NotFoundError } from '../../core/errors';
import { assertDocumentsWritable, documentsIn, transactGuarded } from '../document-locks';
import { relayEditorChange } from '../live/room';
import { checkWriteFormat, type WriteFormat } from './format-rules';
import type { LoadFormats } from './formats/index';
import { checkContent, checkContentOfStoredType, checkEditorId, checkFormattedInput } from './input-rules';
import { buildState, editorState, mergeUpdate, replacementOf } from './yjs-state';

export const DEFAULT_CONTENT_KEY = 'content';

export interface CrdtContentInput {
  organizationId: string;
  documentId: string;
  editorId?: string;
  type?: CrdtType;
  data?: unknown;
  contentKey?: string;
  userId?: string;
  /** xml editors: the content as ProseMirror JSON, HTML or Markdown (decisions §15), in place of `data`. */
  format?: WriteFormat;
  content?: unknown;
}

export interface CrdtUpdateInput extends CrdtContentInput {
  /** A client's Yjs update, base64. */
  yjsUpdate?: string;
}

function checkStateSize(state: Uint8Array): Uint8Array {
  if (state.length > MAX_STATE_BYTES) {
    throw new InvalidArgumentError(`The CRDT state would exceed the limit of ${MAX_STATE_BYTES} bytes.`);
  }
  return state;
}

/** The formats module, loaded by the caller's dynamic import (only the functions that convert pass one). */
async function formatsFrom(loadFormats: LoadFormats | undefined) {
  if (loadFormats === undefined) throw new Error('Content in a format needs the formats module.');
  return loadFormats();
}

/** Sends an editor's writes with the document's migration-lock check in the same transaction. */
const guardedBy =
  (apiKeyId: string, organizationId: string, documentId: string): TransactionWriter =>
  (items) =>
    transactGuarded(apiKeyId, items, documentsIn(organizationId, [documentId]));

/**
 * The type and first state of a new editor: from `data`, or for an xml editor from `format` + `content` (parsed and
 * written as y-prosemirror writes a ProseMirror document). Throws InvalidArgumentError for the input rules.
 */
async function firstContent(
  input: CrdtContentInput,
  contentKey: string,
  loadFormats: LoadFormats | undefined,
): Promise<{ type: CrdtType; state: Uint8Array }> {
  const format = checkFormattedInput(input);
  if (format === undefined) {
    const { type, data, parsedXml } = checkContent(input.type, input.data);
    return { type, state: buildState(type, contentKey, data, parsedXml) };
  }
  if (input.type === undefined) throw new InvalidArgumentError('Type is required.');
  const formats = await formatsFrom(loadFormats);
  return { type: input.type, state: formats.xmlStateOf(contentKey, formats.parseContent(format, input.content)) };
}

/**
 * Creates the editor's data. The organization and document are created when missing (like a first write in an
 * editor), so the data is listed with its document and moves with it. Content in a `format` needs `loadFormats`
 * (the caller's dynamic import of formats/). Throws InvalidArgumentError for the input rules, AlreadyExistsError
 * when the editor already has data, FailedPreconditionError when the document is being migrated.
 */
export async function addCrdtData(
  apiKeyId: string,
  input: CrdtContentInput,
  now = Date.now(),
  loadFormats?: LoadFormats,
): Promise<void> {
  const editorId = checkEditorId(input.editorId);
  const contentKey = input.contentKey ?? DEFAULT_CONTENT_KEY;
  const { type, state: built } = await firstContent(input, contentKey, loadFormats);
  const state = checkStateSize(built);
  const { organizationId, documentId } = input;
  const structure = (await getDocument(apiKeyId, organizationId, documentId))
    ? []
    : [
        ensureOrganizationItem(apiKeyId, organizationId, now),
        upsertDocumentItem(apiKeyId, organizationId, documentId, {}, now),
      ];
  const editor = {
    organizationId,
    documentId,
    editorId,
    type,
    contentKey,
    state,
    lastUpdate: new Date(now).toISOString(),
    lastUpdatedBy: input.userId ?? null,
  };
  if (!(await createEditor(apiKeyId, editor, structure, guardedBy(apiKeyId, organizationId, documentId)))) {
    throw new AlreadyExistsError('CRDT data already exists for this editor ID.');
  }
  // Live connections open on this editor id (none, unless it was authorized and connected before it existed) get it.
  await relayEditorChange({ apiKeyId, organizationId, documentId, editorId }, state);
}

/** The base64 text of a Yjs update, decoded; canonical base64 only, so a typo is an error rather than other bytes. */
function decodeUpdate(base64: string): Uint8Array {
  const bytes = Buffer.from(base64, 'base64');
  if (base64 === '' || bytes.toString('base64') !== base64)
    throw new InvalidArgumentError('yjsUpdate must be a base64-encoded Yjs update.');
  return bytes;
}

/** Throws INVALID_ARGUMENT when an update names another contentKey than the editor's own. */
function checkContentKey(given: string | undefined, stored: string): void {
  if (given !== undefined && given !== stored)
    throw new InvalidArgumentError(`contentKey must be ${stored}, the key this editor was created with.`);
}

/**
 * Replaces the editor's content (`type` + `data`, applied as Yjs operations; or, for xml, `format` + `content`,
 * applied as y-prosemirror's diff, which needs `loadFormats`) or merges a client's `yjsUpdate`.
 * Concurrent updates of one editor all succeed and merge as Yjs merges concurrent edits (shared/db/crdt.ts): a
 * replacement is the set of operations that turns the content it read into `data`, so replacements running at the
 * same time merge like two clients' edits, and one that starts after another answered makes the content exactly
 * its `data`. `type` and `contentKey` may be left out (the stored ones are kept); when given they must be the
 * stored ones. Throws InvalidArgumentError for the
 * input rules, NotFoundError when the editor has no data, FailedPreconditionError when the document is being
 * migrated.
 */
export async function updateCrdtData(
  apiKeyId: string,
  input: CrdtUpdateInput,
  now = Date.now(),
  loadFormats?: LoadFormats,
): Promise<void> {
  const ref: EditorRef = {
    organizationId: input.organizationId,
    documentId: input.documentId,
    editorId: checkEditorId(input.editorId),
  };
  await assertDocumentsWritable(apiKeyId, documentsIn(ref.organizationId, [ref.documentId]));
  // The change to the editor's whole state (deltas included), and the same change as an update of its own.
  let change: (current: StoredEditor, state: Uint8Array) => { state: Uint8Array; delta: Uint8Array };
  if (input.yjsUpdate !== undefined) {
    if (
      input.type !== undefined ||
      input.data !== undefined ||
      input.format !== undefined ||
      input.content !== undefined
    ) {
      throw new InvalidArgumentError('Provide either yjsUpdate or type and data, not both.');
    }
    const update = decodeUpdate(input.yjsUpdate);
    change = (current, state) => ({
      state: mergeUpdate(state, update, current.type, current.contentKey),
      delta: update,
    });
  } else if (checkFormattedInput(input) !== undefined) {
    // Parsed before storage is read: content that does not parse writes nothing.
    const format = input.format!;
    const formats = await formatsFrom(loadFormats);
    const doc = formats.parseContent(format, input.content);
    change = (current, state) => {
      checkWriteFormat(current.type, format);
      if (input.type !== undefined && input.type !== current.type)
        throw new InvalidArgumentError(`Type must be ${current.type}, the type this editor was created with.`);
      checkContentKey(input.contentKey, current.contentKey);
      return formats.replaceXmlContent(state, current.contentKey, doc);
    };
  } else if (input.type === undefined) {
    // Without `type`, the content keeps the editor's type (and contentKey): its data is checked against it.
    if (input.data === undefined) throw new InvalidArgumentError('Data is required.');
    const data = input.data;
    change = (current, state) => {
      checkContentKey(input.contentKey, current.contentKey);
      const content = checkContentOfStoredType(current.type, data);
      return replacementOf(state, current.type, current.contentKey, content.data, content.parsedXml);
    };
  } else {
    const { type, data, parsedXml } = checkContent(input.type, input.data);
    change = (current, state) => {
      if (type !== current.type)
        throw new InvalidArgumentError(`Type must be ${current.type}, the type this editor was created with.`);
      checkContentKey(input.contentKey, current.contentKey);
      return replacementOf(state, type, current.contentKey, data, parsedXml);
    };
  }
  const lastUpdate = new Date(now).toISOString();
  // The change as the write that committed made it (the change function may run again after a lost race).
  let written: Uint8Array | undefined;
  const updated = await updateEditor(
    apiKeyId,
    ref,
    (current) => {
      const next = change(current, editorState(current));
      written = next.delta;
      return { state: checkStateSize(next.state), delta: next.delta, lastUpdate, lastUpdatedBy: input.userId ?? null };
    },
    guardedBy(apiKeyId, ref.organizationId, ref.documentId),
  );
  if (updated === undefined || written === undefined)
    throw new NotFoundError('CRDT data not found for this editor ID.');
  // The open live connections get the change as a Yjs update (decisions §13), after it is stored.
  await relayEditorChange({ apiKeyId, ...ref }, written);
}
