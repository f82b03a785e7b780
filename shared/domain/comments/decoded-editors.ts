/**
 * Editor states decoded for anchors, kept by a warm process: reading a page of threads again (a comments panel
 * refreshing) while the editor has not changed reuses the Y.Doc instead of decoding the same state again, which is
 * most of such a read for a large editor (~15 MB of heap and 100–200 ms for a 1 MB state).
 *
 * The editor is still read every time (strongly consistent, as before): a decoded state is reused only when the
 * state and deltas just read are byte for byte the ones it was decoded from (a SHA-256 of them, a few ms for 1 MB),
 * for the same editor of the same tenant, type and content key. The docs are only read (anchors walk them; nothing
 * is applied to a cached doc). At most MAX_CACHED_STATE_BYTES of state are kept, the least recently used dropped.
 */
import { createHash } from 'node:crypto';
import type * as Y from 'yjs';
import type { StoredEditor } from '../../db/crdt';
import { editorAnchorDoc } from './anchors';

/** Bytes of state (and deltas) whose decoded docs are kept: about 60 MB of heap. */
export const MAX_CACHED_STATE_BYTES = 4 * 1024 * 1024;

interface Entry {
  fingerprint: string;
  bytes: number;
  doc: Y.Doc;
}

/** In order of use, least recent first. */
const decoded = new Map<string, Entry>();
let cachedBytes = 0;

function fingerprintOf(editor: Pick<StoredEditor, 'state' | 'deltas'>): string {
  const hash = createHash('sha256').update(editor.state);
  for (const delta of editor.deltas) hash.update(String(delta.update.byteLength)).update(delta.update);
  return hash.digest('base64');
}

/** The Y.Doc of the editor as just read (its state with its deltas), decoded once for as long as it is unchanged. */
export function decodedEditor(apiKeyId: string, editor: StoredEditor): Y.Doc {
  const key = JSON.stringify([
    apiKeyId,
    editor.organizationId,
    editor.documentId,
    editor.editorId,
    editor.type,
    editor.contentKey,
  ]);
  const fingerprint = fingerprintOf(editor);
  const kept = decoded.get(key);
  forget(key);
  if (kept !== undefined && kept.fingerprint === fingerprint) {
    remember(key, kept);
    return kept.doc;
  }
  const doc = editorAnchorDoc(editor);
  const bytes = editor.state.byteLength + editor.deltas.reduce((sum, delta) => sum + delta.update.byteLength, 0);
  if (bytes <= MAX_CACHED_STATE_BYTES) {
    for (const [oldest] of decoded) {
      if (cachedBytes + bytes <= MAX_CACHED_STATE_BYTES) break;
      forget(oldest);
    }
    remember(key, { fingerprint, bytes, doc });
  }
  return doc;
}

function remember(key: string, entry: Entry) {
  decoded.set(key, entry);
  cachedBytes += entry.bytes;
}

function forget(key: string) {
  const entry = decoded.get(key);
  if (entry === undefined) return;
  decoded.delete(key);
  cachedBytes -= entry.bytes;
}

/** Drops every decoded state (tests, and the bench's reads that measure decoding). */
export function forgetDecodedEditors(): void {
  decoded.clear();
  cachedBytes = 0;
}
