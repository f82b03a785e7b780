/**
 * Yjs clients of a stored editor for the connected tests of CRDT storage: a client that loaded what is stored, and
 * the update that typing at its end makes (what a live connection would send).
 */
import * as Y from 'yjs';
import { getEditor, type EditorRef } from '../../shared/db/crdt';
import type { Tenant } from './fixtures';

/** A client that loaded the stored editor (its state and deltas; empty when there is none). */
export async function client(tenant: Tenant, ref: EditorRef): Promise<Y.Doc> {
  const stored = await getEditor(tenant.apiKeyId, ref);
  const doc = new Y.Doc();
  if (stored !== undefined) {
    Y.applyUpdate(doc, stored.state);
    for (const delta of stored.deltas) Y.applyUpdate(doc, delta.update);
  }
  return doc;
}

/** The update that appends `text` to the client's content. */
export function typed(doc: Y.Doc, text: string): Uint8Array {
  let captured: Uint8Array | undefined;
  const capture = (change: Uint8Array) => (captured = change);
  doc.on('update', capture);
  doc.getText('content').insert(doc.getText('content').length, text);
  doc.off('update', capture);
  return captured as Uint8Array;
}
