/**
 * What the CRDT consumers (crdt-compaction.ts, crdt-versions.ts) share: a batch's changes grouped by the editor they
 * belong to, so each editor is looked at once however many of its items the batch holds, and the changes of the
 * editors whose work failed handed back for the reader to retry.
 */
import { apiKeyIdOfKey } from '../../db/keys';
import type { EditorRef } from '../../db/crdt';
import type { Item } from '../../db/batch';
import type { ItemChange } from '../../db/item-change';

/**
 * Does the work for each editor whose items the batch changed (those `accept` takes, with an API key's partition key
 * and an organization), all at once; answers the changes of the editors where `work` threw and `retry` says so.
 */
export async function perEditor(
  changes: readonly ItemChange[],
  accept: (item: Item) => boolean,
  work: (apiKeyId: string, ref: EditorRef) => Promise<unknown>,
  retry: (error: unknown, ref: EditorRef) => boolean,
): Promise<ItemChange[]> {
  const editors = new Map<string, { apiKeyId: string; ref: EditorRef; changes: ItemChange[] }>();
  for (const change of changes) {
    const item = change.newImage;
    if (item === undefined || !accept(item) || typeof item.pk !== 'string') continue;
    const apiKeyId = apiKeyIdOfKey(item.pk);
    if (apiKeyId === undefined || typeof item.organizationId !== 'string') continue;
    const ref = {
      organizationId: item.organizationId,
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
        await work(apiKeyId, ref);
        return [];
      } catch (error) {
        return retry(error, ref) ? ofEditor : [];
      }
    }),
  );
  return failed.flat();
}
