/**
 * The automatic-versions consumer (shared/domain/crdt/auto-versions.ts): handed each change of an editor's content
 * (heads and deltas written, `crdtVersionsConsumer` in shared/workers.ts) by the changes reader, it gives each editor
 * of the batch a version check once (a conditional Put that writes nothing when the editor has one already).
 * A compaction changes no content and is skipped.
 */
import { logger } from '../../core/logger';
import { crdtVersionsConsumer } from '../../workers';
import { editorChanged } from '../crdt/auto-versions';
import { consumerHandler, type Consume } from './dispatch';
import { perEditor } from './editor-changes';

export const consume: Consume = async (changes) => {
  const now = Date.now();
  return perEditor(
    changes,
    (item) => item.compaction !== true,
    (apiKeyId, ref) => editorChanged(apiKeyId, ref, now),
    (error, ref) => {
      logger.warn('Version check not written; the reader will hand its changes again.', {
        error,
        editorId: ref.editorId,
      });
      return true;
    },
  );
};

/** The automatic-versions consumer alone, as a stream handler (tests). */
export const handler = consumerHandler(crdtVersionsConsumer, consume);
