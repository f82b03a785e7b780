/**
 * The automatic-versions consumer (shared/domain/crdt/auto-versions.ts): handed each change of an editor's content
 * (heads and deltas written, `crdtVersionsConsumer` in shared/workers.ts) by the changes reader, it gives each editor
 * of the batch a version check once (a conditional Put that writes nothing when the editor has one already).
 * A compaction changes no content and is skipped.
 */
import { apiKeyIdOfKey } from '../../db/keys';
import type { EditorRef } from '../../db/crdt';
import { logger } from '../../core/logger';
import { crdtVersionsConsumer } from '../../workers';
import { editorChanged } from '../crdt/auto-versions';
import { consumerHandler, type Consume } from './dispatch';

export const consume: Consume = async (changes) => {
  const editors = new Map<string, { apiKeyId: string; ref: EditorRef; changes: (typeof changes)[number][] }>();
  for (const change of changes) {
    const item = change.newImage;
    if (item === undefined || item.compaction === true || typeof item.pk !== 'string') continue;
    const apiKeyId = apiKeyIdOfKey(item.pk);
    if (apiKeyId === undefined || typeof item.organizationId !== 'string') continue;
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
  const now = Date.now();
  const failed = await Promise.all(
    [...editors.values()].map(async ({ apiKeyId, ref, changes: ofEditor }) => {
      try {
        await editorChanged(apiKeyId, ref, now);
        return [];
      } catch (error) {
        logger.warn('Version check not written; the reader will hand its changes again.', {
          error,
          editorId: ref.editorId,
        });
        return ofEditor;
      }
    }),
  );
  return failed.flat();
};

/** The automatic-versions consumer alone, as a stream handler (tests). */
export const handler = consumerHandler(crdtVersionsConsumer, consume);
