/**
 * The CRDT compaction consumer (shared/domain/crdt/compaction.ts): handed each delta appended to an editor's log
 * (`crdtCompactionConsumer` in shared/workers.ts) by the changes reader, it looks once per editor per batch and
 * folds the log when it has grown past its bounds. Folding twice is harmless: the second finds the log short.
 */
import { FailedPreconditionError } from '../../core/errors';
import { logger } from '../../core/logger';
import { crdtCompactionConsumer } from '../../workers';
import { compactEditorLog } from '../crdt/compaction';
import { consumerHandler, type Consume } from './dispatch';
import { perEditor } from './editor-changes';

// One look per editor however many of its deltas the batch holds.
export const consume: Consume = (changes) =>
  perEditor(
    changes,
    (item) => item.delta !== undefined,
    (apiKeyId, ref) => compactEditorLog(apiKeyId, ref),
    (error, ref) => {
      // A document being migrated refuses the fold: its log moves with it, and the next change of the editor at
      // its new id folds it there. Nothing to retry (retries would end in the dead letters, alarming an operator
      // over a migration); anything else is retried by the reader.
      if (error instanceof FailedPreconditionError) {
        logger.info('CRDT log not compacted: its document is being migrated.', { editorId: ref.editorId });
        return false;
      }
      logger.warn('CRDT log not compacted; the reader will hand its changes again.', { error, editorId: ref.editorId });
      return true;
    },
  );

/** The compaction consumer alone, as a stream handler (tests). */
export const handler = consumerHandler(crdtCompactionConsumer, consume);
