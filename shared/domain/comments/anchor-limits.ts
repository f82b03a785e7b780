/**
 * The bounds of anchors (decisions §16), apart from the anchors module so that the request schemas can name them
 * without loading Yjs (./anchors.ts imports it; ./thread-anchors.ts loads it on the first anchor).
 */

/** Longest base64 position accepted: an item position is under 30 characters; one naming the root type, its key. */
export const MAX_POSITION_CHARS = 512;
/** Most characters of quoted text an anchor answers or stores (a thread anchored on a whole book answers a page). */
export const MAX_QUOTE_CHARS = 1000;
