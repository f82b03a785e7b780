/**
 * Versions of an editor (decisions §14): create, list, read, restore and delete, composing storage
 * (shared/db/crdt-versions.ts, the LOG item's record of changes in shared/db/crdt.ts) with the write path of
 * operations.ts, so a restore is an edit like any other.
 *
 * Rules where the contract is silent (also in docs/project-decisions.md):
 * - A version's state is the editor's whole state at that moment (deltas merged), and its `authors` the users the
 *   editor's LOG item recorded since the version before (live sessions' users, REST writes' `userId`).
 * - `userId` on create and restore is stored on the version as `createdBy` (not answered: §14 has no such field); on
 *   restore it is also the restore edit's `lastUpdatedBy`, so that user is an author of the next version.
 * - Restore computes one Yjs update from the current state to the version's content: for xml through y-prosemirror's
 *   diff when the content reads as ProseMirror and the result equals the version's content, else (and for text, map
 *   and array) the replacement Update CRDT Data makes (yjs-state.ts), which changes only what differs.
 */
import { InvalidArgumentError, NotFoundError, ResourceExhaustedError } from '../../core/errors';
import {
  editorIncarnation,
  editorLog,
  getEditor,
  markVersioned,
  updateEditor,
  MAX_STATE_BYTES,
  type EditorRef,
  type StoredEditor,
  type TransactionWriter,
} from '../../db/crdt';
import {
  MAX_VERSIONS,
  VersionsFull,
  deleteVersion,
  getVersion,
  markRestored,
  listVersions,
  putVersion,
  recountItem,
  versionCensus,
  type Version,
  type VersionKind,
  type VersionedEditor,
} from '../../db/crdt-versions';
import { pageTokenAfter, readPageAfter } from '../../db/page-token';
import { transactWrite } from '../../db/transact';
import { assertDocumentsWritable, documentsIn, transactGuarded } from '../document-locks';
import { relayEditorChange } from '../live/room';
import type { FormatsModule, LoadFormats } from './formats/index';
import { VERSION_NOT_FOUND, versionWithState } from './reads';
import { editorState, mergeUpdate, readValue, replacementOf } from './yjs-state';

export const EDITOR_NOT_FOUND = 'Editor not found.';
export const VERSIONS_FULL = `An editor keeps at most ${MAX_VERSIONS.toLocaleString('en-US')} versions.`;
export const DEFAULT_VERSION_PAGE_SIZE = 20;

const guardedBy =
  (apiKeyId: string, ref: EditorRef): TransactionWriter =>
  (items) =>
    transactGuarded(apiKeyId, items, documentsIn(ref.organizationId, [ref.documentId]));

/**
 * Whether the editor has data: its LOG item (under 1 KB, one read unit) or, for an editor older than the LOG item,
 * its head.
 */
async function editorExists(apiKeyId: string, ref: EditorRef): Promise<boolean> {
  return (await editorLog(apiKeyId, ref)) !== undefined || (await editorIncarnation(apiKeyId, ref)) !== undefined;
}

/**
 * Keeps a version of `state`, the editor's content now, covering the changes its LOG item recorded. When the editor
 * keeps MAX_VERSIONS, the oldest automatic version goes first (recounting, since expired ones leave the count); with
 * none, throws ResourceExhaustedError. Throws FailedPreconditionError while the document is being migrated.
 */
export async function keepVersion(
  apiKeyId: string,
  ref: EditorRef,
  version: { kind: VersionKind; name?: string; createdBy?: string; state: Uint8Array; editor: VersionedEditor },
  now = Date.now(),
): Promise<Version> {
  const changes = await editorLog(apiKeyId, ref);
  const authors = changes?.authors ?? [];
  const write = guardedBy(apiKeyId, ref);
  for (let attempt = 1; ; attempt += 1) {
    try {
      const kept = await putVersion(apiKeyId, ref, { ...version, authors }, now, write);
      if (changes !== undefined) await markVersioned(apiKeyId, ref, changes);
      return kept;
    } catch (error) {
      if (!(error instanceof VersionsFull) || attempt > 3) {
        if (error instanceof VersionsFull) throw new ResourceExhaustedError(VERSIONS_FULL);
        throw error;
      }
    }
    const census = await versionCensus(apiKeyId, ref);
    if (census.count < MAX_VERSIONS) {
      await transactWrite([recountItem(apiKeyId, ref, census.count)]);
      continue;
    }
    if (census.oldestAuto === undefined) throw new ResourceExhaustedError(VERSIONS_FULL);
    await deleteVersion(apiKeyId, ref, census.oldestAuto, write);
  }
}

export interface VersionRequest extends EditorRef {
  name?: string;
  userId?: string;
}

/** Create Version: a `manual` version of the editor's current content. Throws NotFoundError for an unknown editor. */
export async function createVersion(apiKeyId: string, input: VersionRequest, now = Date.now()): Promise<Version> {
  const ref = editorRef(input);
  const editor = await getEditor(apiKeyId, ref);
  if (editor === undefined) throw new NotFoundError(EDITOR_NOT_FOUND);
  return keepVersion(
    apiKeyId,
    ref,
    { kind: 'manual', name: input.name, createdBy: input.userId, state: editorState(editor), editor: keptOf(editor) },
    now,
  );
}

/** What a version keeps of the editor besides its state. */
export const keptOf = (editor: StoredEditor): VersionedEditor => ({
  type: editor.type,
  contentKey: editor.contentKey,
  lastUpdate: editor.lastUpdate,
  lastUpdatedBy: editor.lastUpdatedBy,
});

const editorRef = (input: EditorRef): EditorRef => ({
  organizationId: input.organizationId,
  documentId: input.documentId,
  editorId: input.editorId,
});

/** The scope a page token of the versions list is bound to. */
const listScope = (apiKeyId: string, ref: EditorRef) => ({
  tenant: apiKeyId,
  query: { op: 'crdt/versions/get', ...editorRef(ref) },
});

/**
 * Get Versions: a page of the editor's versions, newest first (summaries only). Throws NotFoundError for an unknown
 * editor, InvalidArgumentError for a page token of another query.
 */
export async function listEditorVersions(
  apiKeyId: string,
  input: EditorRef & { pageSize?: number; pageToken?: string },
): Promise<{ versions: Version[]; pageToken?: string }> {
  const ref = editorRef(input);
  const scope = listScope(apiKeyId, ref);
  const after = await readPageAfter(input.pageToken, scope);
  const page = await listVersions(apiKeyId, ref, { size: input.pageSize ?? DEFAULT_VERSION_PAGE_SIZE, after });
  // An editor with versions exists; only an empty first page needs to ask.
  if (page.items.length === 0 && after === undefined && !(await editorExists(apiKeyId, ref)))
    throw new NotFoundError(EDITOR_NOT_FOUND);
  const pageToken = await pageTokenAfter(scope, page.after);
  return { versions: page.items, ...(pageToken === undefined ? {} : { pageToken }) };
}

/**
 * The update that makes `current`'s content equal to the content of `target` (both whole states of an editor of
 * `editor`'s type), with the state it makes: see the module comment. `formats`: the formats module, for xml.
 */
export function restoreChange(
  editor: Pick<StoredEditor, 'type' | 'contentKey'>,
  current: Uint8Array,
  target: Uint8Array,
  formats?: FormatsModule,
): { state: Uint8Array; delta: Uint8Array } {
  const wanted = readValue(target, editor.type, editor.contentKey);
  if (editor.type === 'xml' && formats !== undefined) {
    try {
      const doc = formats.parseContent(
        'prosemirror-json',
        formats.renderXml(target, editor.contentKey, 'prosemirror-json'),
      );
      const change = formats.replaceXmlContent(current, editor.contentKey, doc);
      if (readValue(change.state, editor.type, editor.contentKey) === wanted) return change;
    } catch {
      // Content no ProseMirror document holds: the replacement below restores it.
    }
  }
  return replacementOf(current, editor.type, editor.contentKey, wanted);
}

/**
 * Restore Version: keeps the current content as a `restore` version, then applies one Yjs update that makes the
 * content equal to the version's, through the write path of Update CRDT Data (stored, relayed to live connections,
 * evented). Live edits made meanwhile merge with it: the update is computed against the state kept as the restore
 * version and merged into the state the write lands on, so every edit is in the restore version or stays in the
 * content. Throws NotFoundError
 * for an unknown editor or version, FailedPreconditionError while the document is being migrated.
 */
export async function restoreVersion(
  apiKeyId: string,
  input: EditorRef & { versionId: string; userId?: string },
  now = Date.now(),
  loadFormats?: LoadFormats,
): Promise<{ versionId: string; restoredVersionId: string }> {
  const ref = editorRef(input);
  await assertDocumentsWritable(apiKeyId, documentsIn(ref.organizationId, [ref.documentId]));
  const [{ version, state: target }, before] = await Promise.all([
    versionWithState(apiKeyId, ref, input.versionId),
    getEditor(apiKeyId, ref),
  ]);
  if (before === undefined) throw new NotFoundError(EDITOR_NOT_FOUND);
  const kept = await keepVersion(
    apiKeyId,
    ref,
    { kind: 'restore', createdBy: input.userId, state: editorState(before), editor: keptOf(before) },
    now,
  );
  const formats = before.type === 'xml' && loadFormats !== undefined ? await loadFormats() : undefined;
  // Computed against the state just kept, and merged into whatever the state is when the write lands: an edit made
  // before it is in the restore version, one made after it stays (a Yjs update deletes only the items it names).
  const change = restoreChange(before, editorState(before), target, formats);
  const lastUpdate = new Date(now).toISOString();
  const updated = await updateEditor(
    apiKeyId,
    ref,
    (current) => {
      const state = mergeUpdate(editorState(current), change.delta, current.type, current.contentKey);
      if (state.length > MAX_STATE_BYTES)
        throw new InvalidArgumentError(`The CRDT state would exceed the limit of ${MAX_STATE_BYTES} bytes.`);
      return { state, delta: change.delta, lastUpdate, lastUpdatedBy: input.userId ?? null };
    },
    guardedBy(apiKeyId, ref),
    // The editor as read for the restore version: the write folds into it, or (changed since) appends the update.
    before,
  );
  if (updated === undefined) throw new NotFoundError(EDITOR_NOT_FOUND);
  const written = change.delta;
  await markRestored(apiKeyId, ref, kept.versionId, version.versionId);
  await relayEditorChange({ apiKeyId, ...ref }, written);
  return { versionId: kept.versionId, restoredVersionId: version.versionId };
}

/** Delete Version. Throws NotFoundError (`Version not found.`) when the editor has no such version. */
export async function removeVersion(apiKeyId: string, input: EditorRef & { versionId: string }): Promise<void> {
  const ref = editorRef(input);
  const version = await getVersion(apiKeyId, ref, input.versionId);
  if (version === undefined || !(await deleteVersion(apiKeyId, ref, version, guardedBy(apiKeyId, ref))))
    throw new NotFoundError(VERSION_NOT_FOUND);
}
