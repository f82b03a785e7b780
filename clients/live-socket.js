/**
 * The live-sync socket adapter (decisions §13 "Framing"): a WebSocket for the stock y-websocket `WebsocketProvider`
 * that speaks the service's `encoding=base64` framing, as API Gateway WebSocket APIs need (they refuse binary frames
 * and close a connection on a frame over 32 KB or a message over 128 KB):
 *
 *   import { WebsocketProvider } from 'y-websocket'
 *   import { LiveSocket } from './live-socket.js'
 *   const provider = new WebsocketProvider(serverUrl, room, ydoc, { params: { token }, WebSocketPolyfill: LiveSocket })
 *   provider.on('closed', ({ code }) => { if (code === 4403) { ...authorize again, set provider.params.token, provider.connect() } })
 *
 * Dependency-free on purpose (no imports at all): it runs as is in browsers and in Node 20+, where Node 20 has no
 * global WebSocket (there: `createLiveSocket(WebSocket)` with the `ws` package's WebSocket).
 *
 * The format is defined in shared/domain/live/framing.ts (its header comment); this file is its second
 * implementation, which test/unit/live-socket.test.ts holds to the first. In short: a message whose standard base64
 * is at most 30,000 characters is one text frame holding that base64; a longer one is chunks
 * `~<id>:<index>/<count>:<part>`, the parts being consecutive slices of its base64 text; several whole messages may
 * share one frame as a batch `!<base64>,<base64>...` (at most 30,000 characters after the `!`).
 *
 * What the adapter does besides the framing:
 * - The provider opens `<serverUrl>/<room>?<params>`; API Gateway accepts connections only at its stage URL, so
 *   the room moves to the query (`room=`), and `encoding=base64` is added. A room therefore has no `/` in it.
 * - When the service denies access (the y-protocols auth message "permission denied", `[2, 0, <reason>]`), the
 *   message is delivered, then the socket closes and reports close code 4403 with that reason, whatever code the
 *   server's close had (API Gateway cannot send custom close codes): the provider then stops reconnecting and emits
 *   `closed`, where the app authorizes again.
 *   A message of the client's over the service's 1 MiB limit is refused the same way, but reported as 1009 (message
 *   too big), as the binary framing's limit is, and a connection past its budget of messages as 1013 (try again
 *   later): the provider reconnects after both.
 * - A frame from the server that is not of the format closes the socket, reported as 1002 (protocol error).
 * - It sends only the local client's own presence (issue 30): the stock provider passes on every remote awareness
 *   change it receives, so without this each caret move in a room of N would cost N messages in (API Gateway bills
 *   each one, and the service runs a function for each only to drop the echo). The adapter does not know the
 *   Y.Doc's clientID, so it learns it from the traffic of this connection: a client id first seen in an awareness
 *   message from the server is remote; one first seen in an awareness message the provider sends is the local
 *   client's (the provider announces its own state on open, and the service sends a client's own presence back
 *   only after the client sent it). An outgoing awareness message loses its remote entries, changes and removals
 *   alike (the service announces a closed client's removal itself), and is not sent when nothing is left; the
 *   local client's own changes and its removal (on `provider.destroy()` or page unload) go out as they were. Every
 *   other message passes untouched. What it learned lasts for the connection: a reconnect learns afresh.
 * - Presence renewals travel once a minute, not every 15 s (issue 30, goal (b)): an idle room's cost is its
 *   renewals (each a frame in and a post to every member). A stock provider renews its unchanged state every 15 s and
 *   drops a remote client it heard nothing new from for 30 s (y-protocols' fixed `outdatedTimeout`), and closes a
 *   connection that delivered nothing for 30 s. So the adapter sends the local client's unchanged state at most once
 *   per PRESENCE_RENEWAL_MS (a change, a removal and an answer to a presence query go out at once), and keeps the
 *   remote clients alive at the provider itself: every 15 s it hands the provider a renewal of each remote state,
 *   for as long as REMOTE_PRESENCE_LIFETIME_MS after that client's last real message (a client gone without a
 *   goodbye, which the service announces at `$disconnect`, is dropped within that lifetime and 30 s). For that, the
 *   clocks of the remote entries the provider receives are the adapter's: its own time in milliseconds, rising, the
 *   real clock only deciding what is news (an entry at a clock the adapter already had is dropped, as a stock
 *   provider drops it). So after a reconnect, the room's presence shows at once instead of at the others' next
 *   renewal. While the server sends nothing for REMOTE_PRESENCE_LIFETIME_MS, the adapter hands nothing, and the
 *   provider's own 30 s timeout closes a dead connection as before.
 * - What the provider sends in one tick (sync step 1 and its presence on open, an update and its caret move) goes
 *   out as one frame, a batch, at the end of the tick (a microtask), in order: API Gateway bills every WebSocket
 *   message. A message too large for a batch is sent in chunks after what waits; close() sends what waits first, so
 *   the provider's goodbye, sent right before it closes, still goes out. Both ends read batches: the service sends
 *   what one frame of a client makes it send to another member (an edit and its caret move) as one.
 */

/** The most base64 characters in one frame (framing.ts FRAME_TEXT_CHARS). */
export const FRAME_TEXT_CHARS = 30000;

/** The close code reported when the service denied access: in 4400–4499, so the provider does not reconnect. */
export const PERMISSION_DENIED_CLOSE_CODE = 4403;

/** The close code reported when the server sent a frame that is not of the format. */
export const PROTOCOL_ERROR_CLOSE_CODE = 1002;

/**
 * The close code reported when the service refused a message over its 1 MiB limit (its auth message's reason starts
 * with MESSAGE_TOO_LARGE_PREFIX, framing.ts MESSAGE_TOO_LARGE_REASON): WebSocket's "message too big".
 */
export const MESSAGE_TOO_LARGE_CLOSE_CODE = 1009;
export const MESSAGE_TOO_LARGE_PREFIX = 'Message too large';

/**
 * The close code reported when the service closed the connection for sending too many messages (its auth message's
 * reason is TOO_MANY_MESSAGES_REASON, frame-budget.ts TOO_MANY_MESSAGES): WebSocket's "try again later", so the
 * provider reconnects (with its backoff) and resyncs what it sent.
 */
export const TOO_MANY_MESSAGES_CLOSE_CODE = 1013;
export const TOO_MANY_MESSAGES_REASON = 'Too many messages.';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DECODE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i += 1) DECODE[ALPHABET.charCodeAt(i)] = i;
const PAD = 61; // '='
const ID = /^[A-Za-z0-9_-]{1,16}$/;
/** The first character of a batch frame, and what separates its messages' texts. */
const BATCH = '!';
const BATCH_SEPARATOR = ',';
const CHUNK = /^~([^:]*):(0|[1-9][0-9]{0,8})\/(0|[1-9][0-9]{0,8}):([\s\S]*)$/;

/** The y-protocols message type of awareness (y-websocket's messageAwareness). */
const MESSAGE_AWARENESS = 1;
/** y-websocket's messageQueryAwareness: the provider answers it with every state it knows. */
const MESSAGE_QUERY_AWARENESS = 3;

/** The local client's unchanged presence goes out at most once per this many milliseconds. */
export const PRESENCE_RENEWAL_MS = 60_000;
/**
 * How long after a remote client's last real message the adapter keeps its presence alive at the provider: over two
 * renewal periods, so one renewal late or lost does not drop a caret.
 */
export const REMOTE_PRESENCE_LIFETIME_MS = 150_000;
/** How often the provider must hear of a remote client (y-protocols' outdatedTimeout / 2) and hear anything at all. */
const PROVIDER_RENEWAL_MS = 15_000;
/** How often the adapter looks whether a renewal is due at the provider. */
const KEEP_ALIVE_TICK_MS = 5_000;
/** A removed client's state, as y-protocols writes it: the varstring "null". */
const NULL_STATE = new Uint8Array([4, 110, 117, 108, 108]);

/** A frame that is not of the format, or chunks that do not join into a message. */
export class MalformedFrameError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(`Malformed frame: ${message}`);
    this.name = 'MalformedFrameError';
  }
}

/**
 * Standard padded base64 (RFC 4648 §4).
 * @param {Uint8Array} bytes
 * @returns {string}
 */
function toBase64(bytes) {
  const codes = new Uint8Array(4 * Math.ceil(bytes.length / 3));
  const full = bytes.length - (bytes.length % 3);
  let o = 0;
  for (let i = 0; i < full; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    codes[o++] = ALPHABET.charCodeAt(n >> 18);
    codes[o++] = ALPHABET.charCodeAt((n >> 12) & 63);
    codes[o++] = ALPHABET.charCodeAt((n >> 6) & 63);
    codes[o++] = ALPHABET.charCodeAt(n & 63);
  }
  const rest = bytes.length - full;
  if (rest > 0) {
    const n = (bytes[full] << 16) | (rest === 2 ? bytes[full + 1] << 8 : 0);
    codes[o++] = ALPHABET.charCodeAt(n >> 18);
    codes[o++] = ALPHABET.charCodeAt((n >> 12) & 63);
    codes[o++] = rest === 2 ? ALPHABET.charCodeAt((n >> 6) & 63) : PAD;
    codes[o++] = PAD;
  }
  // In slices: String.fromCharCode takes its codes as arguments, and engines bound the argument count.
  let text = '';
  for (let i = 0; i < codes.length; i += 8192)
    text += String.fromCharCode.apply(null, /** @type {any} */ (codes.subarray(i, i + 8192)));
  return text;
}

/**
 * @param {string} text
 * @param {number} i
 * @returns {number} the 6-bit value of the character at i, or -1 when it is not in the alphabet
 */
function sextet(text, i) {
  const code = text.charCodeAt(i);
  return code < 128 ? DECODE[code] : -1;
}

/**
 * Decodes canonical standard base64 only (padded, no whitespace, zero padding bits): any other spelling of the same
 * bytes is refused, as the service refuses it.
 * @param {string} text
 * @returns {Uint8Array}
 */
function fromBase64(text) {
  const length = text.length;
  if (length === 0 || length % 4 !== 0) throw new MalformedFrameError('the text is not canonical base64 of a message.');
  const pad = text.charCodeAt(length - 1) !== PAD ? 0 : text.charCodeAt(length - 2) === PAD ? 2 : 1;
  const bytes = new Uint8Array((length / 4) * 3 - pad);
  const body = pad === 0 ? length : length - 4;
  let o = 0;
  for (let i = 0; i < body; i += 4) {
    const a = sextet(text, i);
    const b = sextet(text, i + 1);
    const c = sextet(text, i + 2);
    const d = sextet(text, i + 3);
    if ((a | b | c | d) < 0) throw new MalformedFrameError('the text is not canonical base64 of a message.');
    bytes[o++] = (a << 2) | (b >> 4);
    bytes[o++] = ((b & 15) << 4) | (c >> 2);
    bytes[o++] = ((c & 3) << 6) | d;
  }
  if (pad > 0) {
    const a = sextet(text, body);
    const b = sextet(text, body + 1);
    const c = pad === 1 ? sextet(text, body + 2) : 0;
    const zeroBits = pad === 2 ? (b & 15) === 0 : (c & 3) === 0;
    if ((a | b | c) < 0 || !zeroBits) throw new MalformedFrameError('the text is not canonical base64 of a message.');
    bytes[o++] = (a << 2) | (b >> 4);
    if (pad === 1) bytes[o++] = ((b & 15) << 4) | (c >> 2);
  }
  return bytes;
}

/**
 * The frames that carry `message`: one whole frame when its base64 fits FRAME_TEXT_CHARS, else its chunks under `id`.
 * @param {Uint8Array} message
 * @param {string} id 1–16 characters of [A-Za-z0-9_-], unique per sender per connection
 * @returns {string[]}
 */
export function encodeFrames(message, id) {
  if (message.length === 0) throw new RangeError('An empty message is no protocol message and has no frame.');
  return framesOfText(toBase64(message), id);
}

/**
 * The frames that carry a message whose base64 is `text`.
 * @param {string} text
 * @param {string} id
 * @returns {string[]}
 */
function framesOfText(text, id) {
  if (!ID.test(id)) throw new RangeError(`A chunk id is 1-16 characters of [A-Za-z0-9_-]; got ${JSON.stringify(id)}.`);
  if (text.length <= FRAME_TEXT_CHARS) return [text];
  const count = Math.ceil(text.length / FRAME_TEXT_CHARS);
  const frames = [];
  for (let index = 0; index < count; index += 1) {
    frames.push(`~${id}:${index}/${count}:${text.slice(index * FRAME_TEXT_CHARS, (index + 1) * FRAME_TEXT_CHARS)}`);
  }
  return frames;
}

/**
 * The batch frame that carries `messages`, in order: `!` and their base64 texts joined by `,`.
 * @param {Uint8Array[]} messages at least 2, none empty, their texts and commas at most FRAME_TEXT_CHARS together
 * @returns {string}
 */
export function encodeBatch(messages) {
  if (messages.length < 2) throw new RangeError('A batch holds at least 2 messages.');
  if (messages.some((message) => message.length === 0))
    throw new RangeError('An empty message is no protocol message and has no frame.');
  const body = messages.map(toBase64).join(BATCH_SEPARATOR);
  if (body.length > FRAME_TEXT_CHARS)
    throw new RangeError(`A batch's texts are at most ${FRAME_TEXT_CHARS} characters together.`);
  return BATCH + body;
}

/**
 * Reads the text frames of one connection and gives back each message once it is whole. Chunks of one id may
 * arrive in any order and interleaved with other messages' frames. No bound on a message's size: the service sends
 * documents of any stored size.
 */
export class FrameReader {
  constructor() {
    /** @type {Map<string, {count: number, parts: string[], received: number}>} */
    this.pending = new Map();
  }

  /**
   * @param {string} text one text frame
   * @returns {Uint8Array[]} the messages this frame completes, in order: one for a whole frame or a chunk that
   *   completes its message, several for a batch, none while chunks are missing
   * @throws {MalformedFrameError} for a frame not of the format
   */
  readAll(text) {
    if (text[0] !== BATCH) {
      const message = this.read(text);
      return message === null ? [] : [message];
    }
    if (text.length - 1 > FRAME_TEXT_CHARS)
      throw new MalformedFrameError(`a batch has at most ${FRAME_TEXT_CHARS} characters after the '!'.`);
    const texts = text.slice(1).split(BATCH_SEPARATOR);
    if (texts.length < 2) throw new MalformedFrameError('a batch holds at least 2 messages.');
    // All or nothing: a batch with one part not of the format delivers none of it.
    return texts.map(fromBase64);
  }

  /**
   * @param {string} text one text frame, not a batch
   * @returns {Uint8Array | null} the message this frame completes, or null while chunks are missing
   * @throws {MalformedFrameError} for a frame not of the format
   */
  read(text) {
    if (text.length === 0) throw new MalformedFrameError('the frame is empty.');
    if (text[0] === BATCH) throw new MalformedFrameError('a batch frame holds several messages: read it with readAll.');
    if (text[0] !== '~') {
      if (text.length > FRAME_TEXT_CHARS)
        throw new MalformedFrameError(`a whole frame has at most ${FRAME_TEXT_CHARS} characters.`);
      return fromBase64(text);
    }
    const match = CHUNK.exec(text);
    if (!match) throw new MalformedFrameError('a chunk is ~<id>:<index>/<count>:<part>.');
    const id = match[1];
    const index = Number(match[2]);
    const count = Number(match[3]);
    const part = match[4];
    if (!ID.test(id)) throw new MalformedFrameError('a chunk id is 1-16 characters of [A-Za-z0-9_-].');
    if (count < 2) throw new MalformedFrameError('a chunked message has at least 2 chunks.');
    if (index >= count) throw new MalformedFrameError('a chunk index is below the chunk count.');
    if (part.length === 0 || part.length > FRAME_TEXT_CHARS)
      throw new MalformedFrameError(`a chunk part has 1 to ${FRAME_TEXT_CHARS} characters.`);
    let entry = this.pending.get(id);
    if (entry === undefined) {
      entry = { count, parts: [], received: 0 };
      this.pending.set(id, entry);
    } else if (entry.count !== count) {
      throw new MalformedFrameError(`chunks of message ${id} disagree on the chunk count.`);
    }
    if (entry.parts[index] !== undefined) throw new MalformedFrameError(`chunk ${index} of message ${id} came twice.`);
    entry.parts[index] = part;
    entry.received += 1;
    if (entry.received < count) return null;
    this.pending.delete(id);
    return fromBase64(entry.parts.join(''));
  }
}

/**
 * The URL the adapter opens for the URL the provider built (`<serverUrl>/<room>?<params>`): the room moved from the
 * last path segment to the query parameter `room`, and `encoding=base64` added. The provider's own parameters are
 * kept as it encoded them.
 * @param {string} providerUrl
 * @returns {string}
 */
export function liveUrl(providerUrl) {
  const url = new URL(providerUrl);
  const segments = url.pathname.split('/');
  const segment = segments.pop() ?? '';
  if (segment === '') throw new TypeError(`No room at the end of the path of ${providerUrl}.`);
  let room = segment;
  try {
    room = decodeURIComponent(segment);
  } catch {
    // A stray % stays as it is.
  }
  url.pathname = segments.join('/') || '/';
  const query = url.search.length > 1 ? `${url.search}&` : '?';
  url.search = `${query}room=${encodeURIComponent(room)}&encoding=base64`;
  return url.toString();
}

/**
 * The close code reported for a refusal with `reason`: 1009 for a message over the limit, 1013 for too many messages
 * (the provider reconnects after both), 4403 for every other (no access: the provider stops).
 * @param {string} reason
 * @returns {number}
 */
function closeCodeOf(reason) {
  if (reason.startsWith(MESSAGE_TOO_LARGE_PREFIX)) return MESSAGE_TOO_LARGE_CLOSE_CODE;
  if (reason === TOO_MANY_MESSAGES_REASON) return TOO_MANY_MESSAGES_CLOSE_CODE;
  return PERMISSION_DENIED_CLOSE_CODE;
}

/**
 * The reason of a y-protocols auth "permission denied" message (varuint 2 = messageAuth, varuint 0 = permission
 * denied, varstring reason), or null when `message` is another message.
 * @param {Uint8Array} message
 * @returns {string | null}
 */
function permissionDeniedReason(message) {
  if (message.length < 2 || message[0] !== 2 || message[1] !== 0) return null;
  let length = 0;
  let i = 2;
  for (let shift = 0; ; shift += 7) {
    if (i >= message.length || shift > 49) return '';
    const byte = message[i++];
    length += (byte & 127) * 2 ** shift;
    if (byte < 128) break;
  }
  if (i + length > message.length) return '';
  return new TextDecoder().decode(message.subarray(i, i + length));
}

/**
 * Reads a lib0 varuint (7 bits a byte, least significant first) at `offset`.
 * @param {Uint8Array} bytes
 * @param {number} offset
 * @returns {{value: number, next: number} | null} the value and the offset after it; null when the bytes end first
 *   or the value is past 2^53
 */
function readVarUint(bytes, offset) {
  let value = 0;
  for (let shift = 0; shift < 56; shift += 7) {
    if (offset >= bytes.length) return null;
    const byte = bytes[offset++];
    value += (byte & 127) * 2 ** shift;
    if (byte < 128) return value <= Number.MAX_SAFE_INTEGER ? { value, next: offset } : null;
  }
  return null;
}

/**
 * Appends `value` to `out` as a lib0 varuint.
 * @param {number[]} out
 * @param {number} value a non-negative safe integer
 */
function writeVarUint(out, value) {
  let rest = value;
  while (rest > 127) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
}

/**
 * @typedef {{clientId: number, clock: number, state: Uint8Array}} AwarenessEntry one client's entry of an awareness
 *   message: its id, its clock, and its state's bytes as they lie in the message (the varstring: length and JSON)
 */

/**
 * The entries of a y-protocols awareness message: varuint 1 (messageAwareness), then a varUint8Array holding
 * varuint count and per entry varuint clientID, varuint clock, varstring JSON state.
 * @param {Uint8Array} message
 * @returns {AwarenessEntry[] | null} null when `message` is another message, or not exactly an awareness message
 */
function awarenessEntries(message) {
  if (message[0] !== MESSAGE_AWARENESS) return null;
  const length = readVarUint(message, 1);
  if (length === null || length.next + length.value !== message.length) return null;
  const count = readVarUint(message, length.next);
  if (count === null) return null;
  /** @type {AwarenessEntry[]} */
  const entries = [];
  let at = count.next;
  for (let i = 0; i < count.value; i += 1) {
    const clientId = readVarUint(message, at);
    const clock = clientId && readVarUint(message, clientId.next);
    const state = clock && readVarUint(message, clock.next);
    if (!state || state.next + state.value > message.length) return null;
    const end = state.next + state.value;
    entries.push({ clientId: clientId.value, clock: clock.value, state: message.subarray(clock.next, end) });
    at = end;
  }
  return at === message.length ? entries : null;
}

/**
 * The awareness message holding `entries`, in their order.
 * @param {AwarenessEntry[]} entries
 * @returns {Uint8Array}
 */
function awarenessMessage(entries) {
  /** @type {number[]} */
  const heads = [];
  writeVarUint(heads, entries.length);
  /** @type {number[][]} */
  const ids = entries.map((entry) => {
    /** @type {number[]} */
    const out = [];
    writeVarUint(out, entry.clientId);
    writeVarUint(out, entry.clock);
    return out;
  });
  const bodyLength = entries.reduce((sum, entry, i) => sum + ids[i].length + entry.state.length, heads.length);
  /** @type {number[]} */
  const head = [MESSAGE_AWARENESS];
  writeVarUint(head, bodyLength);
  const out = new Uint8Array(head.length + bodyLength);
  out.set(head, 0);
  out.set(heads, head.length);
  let at = head.length + heads.length;
  entries.forEach((entry, i) => {
    out.set(ids[i], at);
    at += ids[i].length;
    out.set(entry.state, at);
    at += entry.state.length;
  });
  return out;
}

/**
 * @param {Uint8Array} a
 * @param {Uint8Array} b
 * @returns {boolean}
 */
function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * @param {unknown} data
 * @returns {Uint8Array}
 */
function bytesOf(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(
    'A live socket sends protocol messages: a Uint8Array, an ArrayBuffer or another ArrayBuffer view.',
  );
}

/**
 * A WebSocket class speaking the service's base64 framing over `WebSocketImpl`, usable as the provider's
 * `WebSocketPolyfill`.
 * @param {any} [WebSocketImpl] a WebSocket constructor (the browser's, Node 22's global, or the `ws` package's)
 */
export function createLiveSocket(WebSocketImpl = globalThis.WebSocket) {
  if (typeof WebSocketImpl !== 'function') {
    throw new TypeError(
      "createLiveSocket needs a WebSocket implementation: there is no global WebSocket here (Node 20); pass one, such as the ws package's.",
    );
  }

  class LiveSocket {
    static CONNECTING = 0;
    static OPEN = 1;
    static CLOSING = 2;
    static CLOSED = 3;
    CONNECTING = 0;
    OPEN = 1;
    CLOSING = 2;
    CLOSED = 3;

    /**
     * @param {string | URL} url the URL the provider built: `<serverUrl>/<room>?<params>`
     * @param {string | string[]} [protocols]
     */
    constructor(url, protocols) {
      /** The URL actually opened. */
      this.url = liveUrl(String(url));
      /** How a message is delivered to onmessage: 'arraybuffer' (what the provider sets) or 'blob' (the default). */
      this.binaryType = 'blob';
      /** @type {((event: any) => void) | null} */
      this.onopen = null;
      /** @type {((event: any) => void) | null} */
      this.onmessage = null;
      /** @type {((event: any) => void) | null} */
      this.onclose = null;
      /** @type {((event: any) => void) | null} */
      this.onerror = null;
      /** @private */
      this._reader = new FrameReader();
      /** @private */
      this._nextId = 0;
      /**
       * The base64 texts of the whole messages sent in this tick, not yet framed: they go out as one batch frame.
       * @private @type {string[]}
       */
      this._batch = [];
      /** The characters the batch's texts and commas take. @private */
      this._batchChars = 0;
      /**
       * The client ids seen in awareness messages on this connection: true for the local client's (first seen going
       * out), false for a remote one's (first seen coming in).
       * @private @type {Map<number, boolean>}
       */
      this._ownClients = new Map();
      /**
       * The local clients' states as last sent, and when: an unchanged one goes out again only after
       * PRESENCE_RENEWAL_MS.
       * @private @type {Map<number, {state: Uint8Array, at: number}>}
       */
      this._sentOwn = new Map();
      /** Whether the provider is answering a presence query (what it sends then goes out whole). @private */
      this._answering = false;
      /**
       * The remote clients the provider knows of through this connection: the last real clock and state, whether it
       * was a removal, when it came, and the clock and time of the last entry handed to the provider.
       * @private @type {Map<number, {clock: number, state: Uint8Array, removed: boolean, realAt: number, handedClock: number, handedAt: number}>}
       */
      this._remotes = new Map();
      /** When the server last sent a frame, and when the provider was last handed a message. @private */
      this._heardAt = 0;
      /** @private */
      this._handedAt = 0;
      /** @private @type {ReturnType<typeof setInterval> | null} */
      this._keepAlive = null;
      /**
       * The close this socket decided on (access denied, a malformed frame), reported instead of the server's.
       * @private @type {{code: number, reason: string} | null}
       */
      this._ending = null;
      const socket = protocols === undefined ? new WebSocketImpl(this.url) : new WebSocketImpl(this.url, protocols);
      // Binary frames are refused, but seen as such, whatever the implementation's default.
      socket.binaryType = 'arraybuffer';
      /** @private */
      this._socket = socket;
      socket.onopen = () => {
        this._heardAt = Date.now();
        this._handedAt = this._heardAt;
        this._keepAlive = setInterval(() => this._renewRemotes(), KEEP_ALIVE_TICK_MS);
        // In Node a timer keeps the process alive; the socket does that while it is open.
        /** @type {any} */ (this._keepAlive).unref?.();
        this._emit('onopen', { type: 'open', target: this });
      };
      socket.onerror = (/** @type {any} */ event) =>
        this._emit('onerror', { type: 'error', target: this, error: event?.error, message: event?.message });
      socket.onclose = (/** @type {any} */ event) => {
        this._stopKeepAlive();
        const ending = this._ending;
        this._emit('onclose', {
          type: 'close',
          target: this,
          code: ending ? ending.code : event.code,
          reason: ending ? ending.reason : event.reason,
          wasClean: ending ? false : event.wasClean,
        });
      };
      socket.onmessage = (/** @type {any} */ event) => this._receive(event.data);
    }

    /** The underlying socket's state, CLOSING as soon as this socket decided to close. */
    get readyState() {
      const state = this._socket.readyState;
      return this._ending !== null && state < 2 ? 2 : state;
    }

    get bufferedAmount() {
      return this._socket.bufferedAmount;
    }

    get protocol() {
      return this._socket.protocol;
    }

    get extensions() {
      return this._socket.extensions;
    }

    /**
     * Sends one protocol message: at the end of the tick, in one frame with the others sent in the tick (a batch),
     * or in chunks when too large for one; an awareness message with only the local client's entries, or not at all
     * when it has none (the header comment says why).
     * @param {Uint8Array | ArrayBuffer | ArrayBufferView} data
     */
    send(data) {
      let message = bytesOf(data);
      // Like a closing WebSocket, a socket that decided to close discards what is sent.
      if (this._ending !== null) return;
      const entries = awarenessEntries(message);
      if (entries !== null) {
        for (const entry of entries) {
          if (!this._ownClients.has(entry.clientId)) this._ownClients.set(entry.clientId, true);
        }
        // Only the local client's entries: the provider's pass-on of remote presence is an echo the service drops;
        // and of those, an unchanged state only once per PRESENCE_RENEWAL_MS (the header comment says why).
        const now = Date.now();
        const kept = entries.filter((entry) => {
          if (this._ownClients.get(entry.clientId) !== true) return false;
          const last = this._sentOwn.get(entry.clientId);
          if (!this._answering && last && sameBytes(last.state, entry.state) && now - last.at < PRESENCE_RENEWAL_MS)
            return false;
          this._sentOwn.set(entry.clientId, { state: entry.state.slice(), at: now });
          return true;
        });
        if (kept.length === 0) return;
        if (kept.length < entries.length) message = awarenessMessage(kept);
      }
      if (message.length === 0) throw new RangeError('An empty message is no protocol message and has no frame.');
      const text = toBase64(message);
      if (text.length > FRAME_TEXT_CHARS) {
        // Chunks travel on their own, after what was sent before them.
        this._flush();
        for (const frame of framesOfText(text, (this._nextId++).toString(36))) this._socket.send(frame);
        return;
      }
      if (this._batch.length > 0 && this._batchChars + 1 + text.length > FRAME_TEXT_CHARS) this._flush();
      this._batchChars += (this._batch.length > 0 ? 1 : 0) + text.length;
      this._batch.push(text);
      // The end of the tick: what the provider sends together (an update and its caret move) is one frame.
      if (this._batch.length === 1) queueMicrotask(() => this._flush());
    }

    /**
     * Sends the messages waiting for the end of the tick: one alone as a whole frame, several as a batch.
     * @private
     */
    _flush() {
      const batch = this._batch;
      if (batch.length === 0) return;
      this._batch = [];
      this._batchChars = 0;
      if (this._ending !== null) return;
      this._socket.send(batch.length === 1 ? batch[0] : BATCH + batch.join(BATCH_SEPARATOR));
    }

    /**
     * Closes after sending what waits for the end of the tick (the provider's goodbye comes right before its close).
     * @param {number} [code]
     * @param {string} [reason]
     */
    close(code, reason) {
      this._flush();
      this._stopKeepAlive();
      if (code === undefined) this._socket.close();
      else this._socket.close(code, reason);
    }

    /**
     * @private
     * @param {unknown} data
     */
    _receive(data) {
      // After an auth denial or a malformed frame nothing more is delivered.
      if (this._ending !== null) return;
      let messages;
      try {
        if (typeof data !== 'string')
          throw new MalformedFrameError('a binary frame; encoding=base64 carries text frames only.');
        messages = this._reader.readAll(data);
      } catch (error) {
        if (!(error instanceof MalformedFrameError)) throw error;
        this._end(PROTOCOL_ERROR_CLOSE_CODE, error.message);
        return;
      }
      // In order, as if each had come in a frame of its own (a batch carries several).
      for (const message of messages) {
        if (this._ending !== null) return;
        this._deliver(message);
      }
    }

    /**
     * Hands one message to the provider.
     * @private
     * @param {Uint8Array} message
     */
    _deliver(message) {
      const now = Date.now();
      this._heardAt = now;
      // Learnt before the provider sees the message: it passes remote presence on at once, from within onmessage.
      const entries = awarenessEntries(message);
      if (entries !== null) {
        for (const entry of entries) {
          if (!this._ownClients.has(entry.clientId)) this._ownClients.set(entry.clientId, false);
        }
        this._hand(awarenessMessage(entries.flatMap((entry) => this._handed(entry, now))));
      } else {
        this._answering = message[0] === MESSAGE_QUERY_AWARENESS;
        try {
          this._hand(message);
        } finally {
          this._answering = false;
        }
      }
      const denied = permissionDeniedReason(message);
      if (denied !== null) this._end(closeCodeOf(denied), denied);
    }

    /**
     * What the provider is handed of an entry from the server: the local client's as it came (a removal of it makes
     * the provider announce its state again, which must go out); a remote client's news at the adapter's clock; and
     * nothing of a remote entry that is no news (a stock provider would ignore it at its own clock).
     * @private
     * @param {AwarenessEntry} entry
     * @param {number} now
     * @returns {AwarenessEntry[]}
     */
    _handed(entry, now) {
      const removed = sameBytes(entry.state, NULL_STATE);
      if (this._ownClients.get(entry.clientId) === true) {
        if (removed) this._sentOwn.delete(entry.clientId);
        return [entry];
      }
      const known = this._remotes.get(entry.clientId);
      if (known && !(entry.clock > known.clock || (entry.clock === known.clock && removed && !known.removed)))
        return [];
      const handedClock = Math.max(now, (known?.handedClock ?? 0) + 1);
      this._remotes.set(entry.clientId, {
        clock: entry.clock,
        state: entry.state.slice(),
        removed,
        realAt: now,
        handedClock,
        handedAt: now,
      });
      return [{ clientId: entry.clientId, clock: handedClock, state: entry.state }];
    }

    /**
     * Every KEEP_ALIVE_TICK_MS while open: hands the provider a renewal of each remote state it would otherwise drop
     * (a client heard of within REMOTE_PRESENCE_LIFETIME_MS), or an empty awareness message when it would otherwise
     * close the connection as silent; nothing once the server has been silent for REMOTE_PRESENCE_LIFETIME_MS.
     * @private
     */
    _renewRemotes() {
      if (this._ending !== null || this._socket.readyState !== 1) return;
      const now = Date.now();
      if (now - this._heardAt >= REMOTE_PRESENCE_LIFETIME_MS) return;
      /** @type {AwarenessEntry[]} */
      const renewals = [];
      for (const [clientId, remote] of this._remotes) {
        if (remote.removed || now - remote.realAt >= REMOTE_PRESENCE_LIFETIME_MS) continue;
        if (now - remote.handedAt < PROVIDER_RENEWAL_MS) continue;
        remote.handedClock = Math.max(now, remote.handedClock + 1);
        remote.handedAt = now;
        renewals.push({ clientId, clock: remote.handedClock, state: remote.state });
      }
      if (renewals.length > 0 || now - this._handedAt >= PROVIDER_RENEWAL_MS) this._hand(awarenessMessage(renewals));
    }

    /** @private */
    _stopKeepAlive() {
      if (this._keepAlive !== null) clearInterval(this._keepAlive);
      this._keepAlive = null;
    }

    /**
     * Hands one message to the provider.
     * @private
     * @param {Uint8Array} message a message of its own buffer
     */
    _hand(message) {
      this._handedAt = Date.now();
      const buffer = /** @type {ArrayBuffer} */ (message.buffer);
      const payload = this.binaryType === 'blob' && typeof Blob === 'function' ? new Blob([buffer]) : buffer;
      this._emit('onmessage', { type: 'message', target: this, data: payload });
    }

    /**
     * Closes the connection, to report `code` and `reason` when its close arrives.
     * @private
     * @param {number} code
     * @param {string} reason
     */
    _end(code, reason) {
      this._ending = { code, reason };
      try {
        // Browsers let a client send only 1000 and 3000–4999 (so 4403, not 1002); a close reason is short.
        this._socket.close(code);
      } catch {
        this._socket.close(1000);
      }
    }

    /**
     * @private
     * @param {'onopen' | 'onmessage' | 'onclose' | 'onerror'} handler
     * @param {object} event
     */
    _emit(handler, event) {
      const listener = this[handler];
      if (typeof listener === 'function') listener.call(this, event);
    }
  }

  return LiveSocket;
}

/** The adapter over the global WebSocket (browsers, Node 22+); undefined where there is none (Node 20). */
export const LiveSocket =
  typeof globalThis.WebSocket === 'function' ? createLiveSocket(globalThis.WebSocket) : undefined;
