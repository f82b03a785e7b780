/**
 * Where comment threads meet their anchors (decisions §16 "Anchors"): the one seam between the comment operations
 * and the anchors module (shared/domain/comments/anchors.ts), which makes relative positions from
 * `{editorId, index, length}`, checks client base64 positions, and resolves stored anchors against an editor's
 * current state. Until that module is wired here, anchors are stored as given and read back as stored.
 *
 * The comment operations check, before they call this port, that the anchor's editor exists in the document
 * (NOT_FOUND otherwise) and hand it the editor as stored.
 */
import type { StoredEditor } from '../../db/crdt';

/** An anchor as a client sends it: relative positions it made, or an index and length for the service to anchor. */
export type AnchorInput =
  { editorId: string; from: string; to: string } | { editorId: string; index: number; length: number };

/** An anchor as a thread stores it (what prepareAnchor returned). */
export type StoredAnchor = Record<string, unknown> & { editorId: string };

/** An anchor as Get answers it: the stored one and, once resolved, `start`, `end`, `quotedText`, `orphaned`. */
export type ResolvedAnchor = Record<string, unknown> & { editorId: string };

/** Reads an editor of the thread's document at most once per call, whatever the number of threads anchored in it. */
export type EditorLoader = (editorId: string) => Promise<StoredEditor | undefined>;

export interface AnchorPort {
  /**
   * The anchor to store for `input` in `editor` (its current state). Throws InvalidArgumentError for a position that
   * does not decode or does not belong to the editor.
   */
  prepareAnchor(editor: StoredEditor, input: AnchorInput): StoredAnchor | Promise<StoredAnchor>;
  /** The anchors as Get answers them, in the order given; `load` gives each editor's current state. */
  resolveAnchors(anchors: readonly StoredAnchor[], load: EditorLoader): Promise<ResolvedAnchor[]>;
}

/** Stores anchors as given and answers them as stored (no resolution yet). */
export const storeAsGiven: AnchorPort = {
  prepareAnchor: (_editor, input) => ({ ...input }),
  resolveAnchors: async (anchors) => anchors.map((anchor) => ({ ...anchor })),
};

let port: AnchorPort = storeAsGiven;

/** The port the comment operations use. */
export const anchorPort = (): AnchorPort => port;

/** Replaces the port (the anchors module at wiring time; tests); returns what puts the previous one back. */
export function useAnchorPort(next: AnchorPort): () => void {
  const previous = port;
  port = next;
  return () => {
    port = previous;
  };
}
