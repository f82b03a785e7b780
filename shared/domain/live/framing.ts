/**
 * The `encoding=base64` framing of live sync (decisions §13 "Framing"): how y-websocket protocol messages travel in
 * text frames, the one definition of the format. API Gateway WebSocket APIs refuse binary frames (close 1003) and
 * close a connection on a frame over 32 KB or a message over 128 KB (close 1009), so:
 *
 * - A whole protocol message, when its standard base64 (RFC 4648 §4, padded) is at most FRAME_TEXT_CHARS
 *   characters: one text frame holding exactly that base64 text.
 * - Otherwise chunks: the message's base64 text cut into consecutive slices of at most FRAME_TEXT_CHARS characters,
 *   each sent as one text frame `~<id>:<index>/<count>:<part>`:
 *   - `<id>`: 1–16 characters of [A-Za-z0-9_-], unique per sender per connection (a counter is enough); it ties
 *     the chunks of one message together, so chunks of several messages and whole frames may interleave;
 *   - `<index>`: the slice's 0-based position, decimal without leading zeros, below `<count>`;
 *   - `<count>`: how many chunks the message has, decimal, at least 2;
 *   - `<part>`: the slice, not empty. The parts concatenated in index order are the message's base64 text.
 *   `~` is not in the base64 alphabet: a reader tells a chunk from a whole frame by the first character.
 * - A batch (decisions §13 "Framing", issue 30): two or more whole messages in one text frame
 *   `!<base64>,<base64>[,<base64>...]`, each message's canonical base64 text in the order it was sent, separated by
 *   `,`. The texts and commas together are at most FRAME_TEXT_CHARS characters; a message that does not fit goes in
 *   a frame of its own (whole or in chunks), and a batch never holds a chunk. The receiver handles the messages in
 *   order, as if each had come in a frame of its own; the batch is read whole before any of it is handled, so a
 *   malformed batch (fewer than 2 messages, an empty or non-canonical part, over the length) is handled not at all.
 *   API Gateway bills every WebSocket message, so the adapter sends what the provider sends in one tick (sync step 1
 *   and its presence on open, an update and its caret move) as one batch. `!` and `,` are not in the base64 alphabet
 *   either.
 * - A frame is never empty (a protocol message has at least its type byte), and the base64 is canonical: padded,
 *   no whitespace, no URL-safe characters, zero padding bits. Anything else is a malformed frame, which closes the
 *   connection that sent it.
 *
 * A frame of this format is at most FRAME_TEXT_CHARS + 38 ASCII characters, below API_GATEWAY_FRAME_BYTES, and each
 * frame is a WebSocket message of its own, below API_GATEWAY_MESSAGE_BYTES. A client's message is at most
 * MAX_CLIENT_MESSAGE_BYTES after reassembly, so a client's message has at most MAX_CLIENT_CHUNKS chunks; the service
 * sends a document of any stored size, so its messages have no such bound.
 *
 * The browser side is a second implementation of this format, in clients/live-socket.js (dependency-free, so it
 * cannot import this module); test/unit/live-socket.test.ts holds the two to each other.
 */
import { Buffer } from 'node:buffer';

/** The most base64 characters in one frame: a whole message's text, or one chunk's part. */
export const FRAME_TEXT_CHARS = 30_000;

/** API Gateway's limit on one WebSocket frame; a larger frame closes the connection with 1009. */
export const API_GATEWAY_FRAME_BYTES = 32 * 1024;

/** API Gateway's limit on one WebSocket message; a larger message closes the connection with 1009. */
export const API_GATEWAY_MESSAGE_BYTES = 128 * 1024;

/** The largest protocol message a client may send, after reassembly (decisions §13 "Limits"). */
export const MAX_CLIENT_MESSAGE_BYTES = 1024 * 1024;

/** The length of the standard padded base64 text of `bytes` bytes. */
function base64Chars(bytes: number): number {
  return 4 * Math.ceil(bytes / 3);
}

/** The most chunks a client's message needs: one of MAX_CLIENT_MESSAGE_BYTES (47). */
export const MAX_CLIENT_CHUNKS = Math.ceil(base64Chars(MAX_CLIENT_MESSAGE_BYTES) / FRAME_TEXT_CHARS);

/** A frame that is not of the format above, or chunks that do not join into a message. */
export class MalformedFrameError extends Error {
  constructor(message: string) {
    super(`Malformed frame: ${message}`);
    this.name = 'MalformedFrameError';
  }
}

/**
 * A client's message over MAX_CLIENT_MESSAGE_BYTES (in chunks that say so, or once joined). The service closes the
 * connection after the auth message MESSAGE_TOO_LARGE_REASON, which the adapter reports as close code 1009 (API
 * Gateway's DeleteConnection cannot carry a close code).
 */
export class MessageTooLargeError extends MalformedFrameError {
  constructor() {
    super(`a client's message is at most ${MAX_CLIENT_MESSAGE_BYTES} bytes.`);
    this.name = 'MessageTooLargeError';
  }
}

/** The auth message's reason when a client's message is too large: the adapter knows it by its start. */
export const MESSAGE_TOO_LARGE_REASON = `Message too large: a client's message is at most ${MAX_CLIENT_MESSAGE_BYTES} bytes.`;

export type ParsedFrame =
  | { kind: 'whole'; message: Uint8Array }
  | { kind: 'chunk'; id: string; index: number; count: number; part: string }
  | { kind: 'batch'; messages: Uint8Array[] };

/** The first character of a batch frame. */
const BATCH = '!';
/** What separates the messages' texts in a batch frame. */
const BATCH_SEPARATOR = ',';

const ID = /^[A-Za-z0-9_-]{1,16}$/;
/** `~<id>:<index>/<count>:<part>`; the numbers in canonical decimal, at most 9 digits (validated against count). */
const CHUNK = /^~([^:]*):(0|[1-9][0-9]{0,8})\/(0|[1-9][0-9]{0,8}):([\s\S]*)$/;
const BASE64_CHARS = /^[A-Za-z0-9+/=]+$/;

/**
 * The frames that carry `message`: one whole frame when its base64 fits FRAME_TEXT_CHARS, else its chunks under
 * `id`. No bound on the count: the service sends documents of any stored size.
 * @throws RangeError for an empty message (no protocol message is empty) or an id outside the format.
 */
export function encodeFrames(message: Uint8Array, id: string): string[] {
  if (message.length === 0) throw new RangeError('An empty message is no protocol message and has no frame.');
  if (!ID.test(id)) throw new RangeError(`A chunk id is 1-16 characters of [A-Za-z0-9_-]; got ${JSON.stringify(id)}.`);
  const text = Buffer.from(message.buffer, message.byteOffset, message.byteLength).toString('base64');
  if (text.length <= FRAME_TEXT_CHARS) return [text];
  const count = Math.ceil(text.length / FRAME_TEXT_CHARS);
  const frames: string[] = [];
  for (let index = 0; index < count; index += 1) {
    frames.push(`~${id}:${index}/${count}:${text.slice(index * FRAME_TEXT_CHARS, (index + 1) * FRAME_TEXT_CHARS)}`);
  }
  return frames;
}

/**
 * The batch frame that carries `messages`, in order.
 * @throws RangeError for fewer than 2 messages, an empty one, or texts over FRAME_TEXT_CHARS together (the caller
 *   sends those in frames of their own).
 */
export function encodeBatch(messages: readonly Uint8Array[]): string {
  if (messages.length < 2) throw new RangeError('A batch holds at least 2 messages.');
  if (messages.some((message) => message.length === 0))
    throw new RangeError('An empty message is no protocol message and has no frame.');
  const body = messages
    .map((message) => Buffer.from(message.buffer, message.byteOffset, message.byteLength).toString('base64'))
    .join(BATCH_SEPARATOR);
  if (body.length > FRAME_TEXT_CHARS)
    throw new RangeError(`A batch's texts are at most ${FRAME_TEXT_CHARS} characters together.`);
  return `${BATCH}${body}`;
}

/**
 * The frames that carry `messages` to one connection, in order, as few as the format allows (API Gateway bills each
 * frame): consecutive messages whose texts fit one frame together go as a batch (one alone as a whole frame), a
 * message too large for one frame in chunks under an id from `nextId`.
 */
export function encodeMessages(messages: readonly Uint8Array[], nextId: () => string): string[] {
  const frames: string[] = [];
  let batch: string[] = [];
  let chars = 0;
  const flush = () => {
    if (batch.length > 0) frames.push(batch.length === 1 ? batch[0] : `${BATCH}${batch.join(BATCH_SEPARATOR)}`);
    batch = [];
    chars = 0;
  };
  for (const message of messages) {
    const text = Buffer.from(message.buffer, message.byteOffset, message.byteLength).toString('base64');
    if (text.length > FRAME_TEXT_CHARS) {
      flush();
      frames.push(...encodeFrames(message, nextId()));
      continue;
    }
    if (batch.length > 0 && chars + 1 + text.length > FRAME_TEXT_CHARS) flush();
    chars += (batch.length > 0 ? 1 : 0) + text.length;
    batch.push(text);
  }
  flush();
  return frames;
}

/**
 * Reads one text frame a client sent: a whole message (decoded), one chunk (its part still base64 text, for
 * joinChunks once all `count` parts of `id` are there), or a batch (every message decoded).
 * @throws MalformedFrameError for anything not of the format, or a chunk count above MAX_CLIENT_CHUNKS.
 */
export function parseFrame(text: string): ParsedFrame {
  if (text.length === 0) throw new MalformedFrameError('the frame is empty.');
  if (text[0] === BATCH) {
    if (text.length - 1 > FRAME_TEXT_CHARS)
      throw new MalformedFrameError(`a batch's texts are at most ${FRAME_TEXT_CHARS} characters together.`);
    const parts = text.slice(1).split(BATCH_SEPARATOR);
    if (parts.length < 2) throw new MalformedFrameError('a batch holds at least 2 messages.');
    return { kind: 'batch', messages: parts.map(decodeCanonical) };
  }
  if (text[0] !== '~') {
    if (text.length > FRAME_TEXT_CHARS)
      throw new MalformedFrameError(`a whole frame has at most ${FRAME_TEXT_CHARS} characters.`);
    return { kind: 'whole', message: decodeCanonical(text) };
  }
  const match = CHUNK.exec(text);
  if (!match) throw new MalformedFrameError('a chunk is ~<id>:<index>/<count>:<part>.');
  const [, id, indexText, countText, part] = match;
  const index = Number(indexText);
  const count = Number(countText);
  if (!ID.test(id)) throw new MalformedFrameError('a chunk id is 1-16 characters of [A-Za-z0-9_-].');
  if (count < 2) throw new MalformedFrameError('a chunked message has at least 2 chunks.');
  if (count > MAX_CLIENT_CHUNKS) throw new MessageTooLargeError();
  if (index >= count) throw new MalformedFrameError('a chunk index is below the chunk count.');
  if (part.length === 0) throw new MalformedFrameError('a chunk part is not empty.');
  if (part.length > FRAME_TEXT_CHARS)
    throw new MalformedFrameError(`a chunk part has at most ${FRAME_TEXT_CHARS} characters.`);
  if (!BASE64_CHARS.test(part)) throw new MalformedFrameError('a chunk part holds base64 characters only.');
  return { kind: 'chunk', id, index, count, part };
}

/**
 * The message whose chunks' parts these are, in index order (all `count` of them; the caller collected them).
 * @throws MalformedFrameError when the joined text is not canonical base64 or decodes to more than
 * MAX_CLIENT_MESSAGE_BYTES.
 */
export function joinChunks(parts: readonly string[]): Uint8Array {
  const text = parts.join('');
  // Checked before decoding: a client's oversized message costs no buffer.
  if (text.length > base64Chars(MAX_CLIENT_MESSAGE_BYTES)) throw new MessageTooLargeError();
  const message = decodeCanonical(text);
  if (message.length > MAX_CLIENT_MESSAGE_BYTES) throw new MessageTooLargeError();
  return message;
}

/**
 * Decodes standard padded base64, refusing every other spelling. Buffer's decoder is lenient (it skips what it does
 * not know, takes URL-safe characters, padding or not), so the text must be exactly what encoding the bytes gives.
 */
function decodeCanonical(text: string): Uint8Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length === 0 || bytes.toString('base64') !== text)
    throw new MalformedFrameError('the text is not canonical base64 of a message.');
  // A copy: a small Buffer is a view into Node's shared pool, and a caller may keep or hand on `.buffer`.
  return new Uint8Array(bytes);
}
