/**
 * Compaction of an editor's log of Yjs changes (shared/db/crdt.ts): live edits append one delta each (decisions
 * §13), so a busy editor's log grows until something folds it into the stored state: the compaction consumer
 * (shared/domain/stream/crdt-compaction.ts) folds it when it has grown past COMPACT_LOG_BYTES or COMPACT_LOG_ITEMS, so
 * a read of the editor (a REST get, a live client's first sync) reads the state and a bounded log, never a day of
 * keystrokes.
 */
import { compactEditor, type EditorRef } from '../../db/crdt';
import { documentsIn, transactGuarded } from '../document-locks';
import { editorState } from './yjs-state';

/** Folds the editor's log when it is past its bounds; see compactEditor. The fold carries the migration-lock check. */
export function compactEditorLog(apiKeyId: string, ref: EditorRef): Promise<boolean> {
  return compactEditor(apiKeyId, ref, editorState, (items) =>
    transactGuarded(apiKeyId, items, documentsIn(ref.organizationId, [ref.documentId])),
  );
}
