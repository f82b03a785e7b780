/**
 * The anchors of comment threads against the stored editors (decisions §16 "Anchors"): the I/O around the pure
 * anchors module (./anchors.ts). Writes make or check anchors in the editor's current state; reads resolve them.
 *
 * Each editor a request names is read once (one strongly consistent Query) and its state (with its pending deltas)
 * decoded into one Y.Doc once, whatever the number of threads anchored in it: add checks all its items' anchors in
 * one editor with one prepareAnchors, get resolves all of a page's anchors in one editor with one resolveAnchors.
 *
 * Yjs (the anchors module and the decoded states) is imported on the first anchor a request makes or resolves, beside
 * the editor's read: operations without anchors (count, read, delete, the comments) leave it out of their bundles,
 * and a request without one never loads it.
 */
import type * as Y from 'yjs';
import { NotFoundError, ServiceError } from '../../core/errors';
import { getEditor, type StoredEditor } from '../../db/crdt';
import type { Thread } from '../../db/comment-annotation';
import { logger } from '../../core/logger';
import type { AnchorError, AnchorInput, ResolvedAnchor, StoredAnchor } from './anchors';

/** The Yjs side of anchors, loaded when a request first needs it (a chunk of its own in the bundles). */
async function yjsAnchors() {
  const [anchors, decoded] = await Promise.all([import('./anchors'), import('./decoded-editors')]);
  return { ...anchors, ...decoded };
}

export type { AnchorError, AnchorInput, ResolvedAnchor, StoredAnchor } from './anchors';

interface DocumentScope {
  organizationId: string;
  documentId: string;
}

/** Indexes of `items` grouped by a key (undefined keys left out), in order. */
function groupBy<T>(items: readonly T[], keyOf: (item: T) => string | undefined): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    if (key !== undefined) groups.set(key, [...(groups.get(key) ?? []), index]);
  });
  return groups;
}

/** The editor of the document, or NOT_FOUND (`Editor not found: <id>.`). */
async function requireEditor(apiKeyId: string, scope: DocumentScope, editorId: string): Promise<StoredEditor> {
  const editor = await getEditor(apiKeyId, { ...scope, editorId });
  if (editor === undefined) throw new NotFoundError(`Editor not found: ${editorId}.`);
  return editor;
}

/**
 * The anchors to store for `inputs` (undefined: an item without an anchor), made or checked against each editor's
 * current state: each result is the stored anchor, or the AnchorError of that item (INVALID_ARGUMENT or
 * OUT_OF_RANGE naming the field). Throws NotFoundError when an anchor's editor has no data in the document: every
 * editor is looked up before anything is written.
 */
export async function makeAnchors(
  apiKeyId: string,
  scope: DocumentScope,
  inputs: ReadonlyArray<AnchorInput | undefined>,
): Promise<Array<StoredAnchor | AnchorError | undefined>> {
  const made: Array<StoredAnchor | AnchorError | undefined> = inputs.map(() => undefined);
  const byEditor = groupBy(inputs, (input) => input?.editorId);
  if (byEditor.size === 0) return made;
  const [{ prepareAnchors, decodedEditor }, editors] = await Promise.all([
    yjsAnchors(),
    Promise.all([...byEditor.keys()].map((editorId) => requireEditor(apiKeyId, scope, editorId))),
  ]);
  [...byEditor.values()].forEach((indexes, group) => {
    const editor = editors[group];
    const results = prepareAnchors(
      editor,
      decodedEditor(apiKeyId, editor),
      indexes.map((index) => inputs[index] as AnchorInput),
    );
    indexes.forEach((index, position) => (made[index] = results[position]));
  });
  return made;
}

/** The anchor to store for `input`; throws NotFoundError (its editor) or its AnchorError. */
export async function makeAnchor(apiKeyId: string, scope: DocumentScope, input: AnchorInput): Promise<StoredAnchor> {
  const [made] = await makeAnchors(apiKeyId, scope, [input]);
  if (made instanceof ServiceError) throw made;
  return made as StoredAnchor;
}

/** `{success: false}` of a batch item whose anchor was refused: the code, then the message naming the field. */
export const anchorFailure = (error: AnchorError) => ({ success: false, message: `${error.code}: ${error.message}` });

/** The stored anchor as the anchors module takes it (every field of the right type, whatever was stored). */
function storedAnchor(value: Record<string, unknown>): StoredAnchor {
  const text = (field: string) => (typeof value[field] === 'string' ? (value[field] as string) : '');
  const blocks = (field: 'fromBlocks' | 'toBlocks') =>
    Array.isArray(value[field]) ? { [field]: (value[field] as unknown[]).map(String) } : {};
  return {
    editorId: text('editorId'),
    from: text('from'),
    to: text('to'),
    length: typeof value.length === 'number' ? value.length : 0,
    quotedText: text('quotedText'),
    ...blocks('fromBlocks'),
    ...blocks('toBlocks'),
  };
}

/** An editor's state decoded for anchors, or why it could not be (none: the editor has no data). */
type LoadedEditor = { editor: StoredEditor; doc: Y.Doc } | { editor: StoredEditor; error: unknown } | undefined;

/** Editors read and decoded for the anchors of a page, by document and editor id (see loadEditors). */
export type LoadedEditors = Map<string, Promise<LoadedEditor>>;

const editorKey = (documentId: string, editorId: string) => JSON.stringify([documentId, editorId]);

/**
 * Starts reading and decoding each editor of `refs` (once each), for resolveThreadAnchors: a read of a page starts
 * it as soon as the listing names the editors, beside the threads' reads, so the two do not add up. The promises
 * never reject unseen: a failed read rejects when resolveThreadAnchors awaits it.
 */
export function loadEditors(
  apiKeyId: string,
  organizationId: string,
  refs: ReadonlyArray<{ documentId: string; editorId?: string }>,
  into: LoadedEditors = new Map(),
): LoadedEditors {
  for (const { documentId, editorId } of refs) {
    if (editorId === undefined || into.has(editorKey(documentId, editorId))) continue;
    const read = Promise.all([yjsAnchors(), getEditor(apiKeyId, { organizationId, documentId, editorId })]);
    const loading = read.then(([{ decodedEditor }, editor]): LoadedEditor => {
      if (editor === undefined) return undefined;
      try {
        return { editor, doc: decodedEditor(apiKeyId, editor) };
      } catch (error) {
        return { editor, error };
      }
    });
    loading.catch(() => undefined);
    into.set(editorKey(documentId, editorId), loading);
  }
  return into;
}

/**
 * Where the anchors of `threads` are now, by annotation id (threads without an anchor have none), each editor read
 * and decoded once: from `editors` when a caller started it already (loadEditors), else here. Never fails for an
 * anchor: one that no longer resolves, or whose editor was deleted, is orphaned (its quoted text kept).
 */
export async function resolveThreadAnchors(
  apiKeyId: string,
  organizationId: string,
  threads: readonly Thread[],
  editors: LoadedEditors = new Map(),
): Promise<Map<string, ResolvedAnchor>> {
  const anchored = threads.flatMap((thread) =>
    thread.head.anchor === undefined ? [] : [{ thread, anchor: storedAnchor(thread.head.anchor) }],
  );
  const byEditor = groupBy(anchored, ({ thread, anchor }) => editorKey(thread.head.documentId, anchor.editorId));
  loadEditors(
    apiKeyId,
    organizationId,
    anchored.map(({ thread, anchor }) => ({ documentId: thread.head.documentId, editorId: anchor.editorId })),
    editors,
  );
  const resolved = new Map<string, ResolvedAnchor>();
  if (anchored.length === 0) return resolved;
  const { orphanedAnchor, resolveAnchors } = await yjsAnchors();
  await Promise.all(
    [...byEditor].map(async ([key, indexes]) => {
      const group = indexes.map((index) => anchored[index]);
      const anchors = group.map(({ anchor }) => anchor);
      const loaded = await editors.get(key);
      let answers: ResolvedAnchor[];
      try {
        if (loaded !== undefined && 'error' in loaded) throw loaded.error;
        answers =
          loaded === undefined ? anchors.map(orphanedAnchor) : resolveAnchors(loaded.editor, loaded.doc, anchors);
      } catch (error) {
        // A state that does not decode: the threads are answered, their anchors orphaned.
        logger.error('comment anchors could not be resolved', {
          documentId: group[0].thread.head.documentId,
          editorId: anchors[0].editorId,
          error: String(error),
        });
        answers = anchors.map(orphanedAnchor);
      }
      group.forEach(({ thread }, index) => resolved.set(thread.head.annotationId, answers[index]));
    }),
  );
  return resolved;
}
