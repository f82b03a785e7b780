/**
 * The CRDT compaction consumer (shared/domain/crdt/compaction.ts): handed each delta appended to an editor's log
 * (`crdtCompactionConsumer` in shared/workers.ts) by the changes reader, it looks once per editor per batch and
 * folds the log when it has grown past its bounds. Folding twice is harmless: the second finds the log short.
 */
import { apiKeyIdOfKey } from '../../db/keys';
import type { EditorRef } from '../../db/crdt';
import { FailedPreconditionError } from '../../core/errors';
import { logger } from '../../core/logger';
import { crdtCompactionConsumer } from '../../workers';
import { compactEditorLog } from '../crdt/compaction';
import { consumerHandler, type Consume } from './dispatch';

export const consume: Consume = async (changes) => {
  // One look per editor however many of its deltas the batch holds.
  const editors = new Map<string, { apiKeyId: string; ref: EditorRef; changes: (typeof changes)[number][] }>();
  for (const change of changes) {
    const item = change.newImage;
    if (item?.delta === undefined || typeof item.pk !== 'string') continue;
    const apiKeyId = apiKeyIdOfKey(item.pk);
    if (apiKeyId === undefined) continue;
    const ref = {
      organizationId: String(item.organizationId),
      documentId: String(item.documentId),
      editorId: String(item.editorId),
    };
    const id = `${item.pk}\n${ref.editorId}`;
    const entry = editors.get(id) ?? { apiKeyId, ref, changes: [] };
    entry.changes.push(change);
    editors.set(id, entry);
  }
  const failed = await Promise.all(
    [...editors.values()].map(async ({ apiKeyId, ref, changes: ofEditor }) => {
      try {
        await compactEditorLog(apiKeyId, ref);
        return [];
      } catch (error) {
        // A document being migrated refuses the fold: its log moves with it, and the next change of the editor at
        // its new id folds it there. Nothing to retry (retries would end in the dead letters, alarming an operator
        // over a migration); anything else is retried by the reader.
        if (error instanceof FailedPreconditionError) {
          logger.info('CRDT log not compacted: its document is being migrated.', { editorId: ref.editorId });
          return [];
        }
        logger.warn('CRDT log not compacted; the reader will hand its changes again.', {
          error,
          editorId: ref.editorId,
        });
        return ofEditor;
      }
    }),
  );
  return failed.flat();
};

/** The compaction consumer alone, as a stream handler (tests). */
export const handler = consumerHandler(crdtCompactionConsumer, consume);
