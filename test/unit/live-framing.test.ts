/**
 * The base64 framing of live sync (shared/domain/live/framing.ts): round trips at the sizes that matter, the frame
 * limits of API Gateway, every malformed frame refused, and the browser adapter's second implementation
 * (clients/live-socket.js) agreeing with it in both directions.
 */
import { Buffer } from 'node:buffer';
import {
  API_GATEWAY_FRAME_BYTES,
  API_GATEWAY_MESSAGE_BYTES,
  FRAME_TEXT_CHARS,
  MAX_CLIENT_CHUNKS,
  MAX_CLIENT_MESSAGE_BYTES,
  MalformedFrameError,
  encodeBatch,
  encodeFrames,
  encodeMessages,
  joinChunks,
  parseFrame,
} from '../../shared/domain/live/framing';
import {
  FrameReader,
  MalformedFrameError as JsMalformedFrameError,
  encodeBatch as jsEncodeBatch,
  encodeFrames as jsEncodeFrames,
} from '../../clients/live-socket.js';

/** `size` bytes of a fixed pseudo-random pattern (every byte value occurs, so every base64 character does). */
function bytes(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let state = seed;
  for (let i = 0; i < size; i += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    out[i] = state >>> 24;
  }
  return out;
}

/** The message a client's frames carry, read with the service's codec. */
function serverRead(frames: readonly string[]): Uint8Array {
  const parsed = frames.map(parseFrame);
  if (parsed.length === 1 && parsed[0].kind === 'whole') return parsed[0].message;
  const chunks = parsed.map((frame) => {
    if (frame.kind !== 'chunk') throw new Error('a whole frame among chunks');
    return frame;
  });
  expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
  expect(chunks.every((chunk) => chunk.count === chunks.length)).toBe(true);
  return joinChunks([...chunks].sort((a, b) => a.index - b.index).map((chunk) => chunk.part));
}

/** The message the service's frames carry, read with the browser adapter's reader. */
function browserRead(frames: readonly string[]): Uint8Array {
  const reader = new FrameReader();
  const messages = frames.map((frame) => reader.read(frame));
  expect(messages.slice(0, -1).every((message) => message === null)).toBe(true);
  const message = messages[messages.length - 1];
  if (message === null) throw new Error('the frames did not complete a message');
  return message;
}

/**
 * Asserts equal bytes. Compared as Buffers: jest's deep equality walks a megabyte array element by element, which
 * takes seconds, and prints a megabyte diff.
 */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.length).toBe(expected.length);
  expect(Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected)).toBe(true);
}

function malformed(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(MalformedFrameError);
    return (error as Error).message;
  }
  throw new Error('expected a MalformedFrameError');
}

/** Bytes whose base64 is exactly FRAME_TEXT_CHARS characters (3 bytes are 4 characters). */
const AT_THRESHOLD = (FRAME_TEXT_CHARS / 4) * 3;

describe('live framing limits', () => {
  it('keeps every frame, with the longest id and a 3 MB document, within API Gateway frame and message limits', () => {
    const frames = encodeFrames(bytes(3 * 1024 * 1024), 'abcdefghijklmnop');

    for (const frame of frames) {
      expect(Buffer.byteLength(frame, 'utf8')).toBeLessThanOrEqual(API_GATEWAY_FRAME_BYTES);
      expect(Buffer.byteLength(frame, 'utf8')).toBeLessThanOrEqual(API_GATEWAY_MESSAGE_BYTES);
    }
    for (const frame of frames)
      expect((parseFrameUnbounded(frame) as { part: string }).part.length).toBeLessThanOrEqual(FRAME_TEXT_CHARS);
  });

  it('bounds a client message to MAX_CLIENT_CHUNKS chunks, exactly what MAX_CLIENT_MESSAGE_BYTES needs', () => {
    const frames = encodeFrames(bytes(MAX_CLIENT_MESSAGE_BYTES), 'a');

    expect(frames).toHaveLength(MAX_CLIENT_CHUNKS);
    expect(MAX_CLIENT_CHUNKS).toBe(47);
    expectSameBytes(serverRead(frames), bytes(MAX_CLIENT_MESSAGE_BYTES));
  });
});

/** A chunk frame's fields without the client chunk-count bound (the service's own frames have none). */
function parseFrameUnbounded(frame: string) {
  const match = /^~([^:]+):(\d+)\/(\d+):(.*)$/s.exec(frame);
  if (!match) throw new Error(`not a chunk: ${frame.slice(0, 40)}`);
  return { id: match[1], index: Number(match[2]), count: Number(match[3]), part: match[4] };
}

describe('live framing round trips', () => {
  it('sends a message whose base64 is exactly FRAME_TEXT_CHARS as one whole frame', () => {
    const message = bytes(AT_THRESHOLD);

    const frames = encodeFrames(message, 'a');

    expect(frames).toEqual([Buffer.from(message).toString('base64')]);
    expect(frames[0]).toHaveLength(FRAME_TEXT_CHARS);
    const parsed = parseFrame(frames[0]);
    expect(parsed.kind).toBe('whole');
    expectSameBytes((parsed as { message: Uint8Array }).message, message);
  });

  it('chunks a message one byte over the threshold into two chunks whose parts join to its base64', () => {
    const message = bytes(AT_THRESHOLD + 1);

    const frames = encodeFrames(message, 'x_9');

    expect(frames).toHaveLength(2);
    const chunks = frames.map((frame) => parseFrame(frame));
    expect(
      chunks.map((chunk) => chunk.kind === 'chunk' && [chunk.id, chunk.index, chunk.count, chunk.part.length]),
    ).toEqual([
      ['x_9', 0, 2, FRAME_TEXT_CHARS],
      ['x_9', 1, 2, 4],
    ]);
    expectSameBytes(serverRead(frames), message);
  });

  it.each([
    ['one byte', 1],
    ['300 KB', 300 * 1024],
  ])('round-trips a %s message through the service codec', (_name, size) => {
    const message = bytes(size);

    const frames = encodeFrames(message, '7');

    for (const frame of frames) expect(frame.length).toBeLessThanOrEqual(FRAME_TEXT_CHARS + 38);
    expectSameBytes(serverRead(frames), message);
  });

  it('sends a 2 MB message (a document: no count bound) in chunks that the adapter reassembles', () => {
    const message = bytes(2 * 1024 * 1024);

    const frames = encodeFrames(message, 'doc');

    expect(frames.length).toBeGreaterThan(MAX_CLIENT_CHUNKS);
    expectSameBytes(browserRead(frames), message);
  });

  it('refuses to encode an empty message, which is no protocol message (an empty frame is malformed)', () => {
    expect(() => encodeFrames(new Uint8Array(0), 'a')).toThrow(RangeError);
    expect(() => jsEncodeFrames(new Uint8Array(0), 'a')).toThrow(RangeError);
    malformed(() => parseFrame(''));
  });

  it('refuses to encode under an id outside the format', () => {
    expect(() => encodeFrames(bytes(10), '')).toThrow(RangeError);
    expect(() => encodeFrames(bytes(10), 'a'.repeat(17))).toThrow(RangeError);
    expect(() => encodeFrames(bytes(10), 'a:b')).toThrow(RangeError);
  });

  it('encodes a message that views part of a larger buffer as that part only', () => {
    const whole = bytes(100);
    const view = whole.subarray(10, 20);

    expectSameBytes(serverRead(encodeFrames(view, 'a')), bytes(100).subarray(10, 20));
  });
});

describe('live framing refuses malformed frames', () => {
  it.each([
    ['empty text', ''],
    ['base64 without padding', 'AA'],
    ['a length not a multiple of 4', 'AAAAA'],
    ['non-zero padding bits', 'AB=='],
    ['non-zero padding bits (one =)', 'AAB='],
    ['three padding characters', 'A==='],
    ['padding in the middle', 'AA==AAAA'],
    ['whitespace', 'AAAA AAAA'],
    ['a line break', 'AAAA\nAAAA'],
    ['URL-safe characters', '-_-_'],
    ['a character outside base64', 'AA*A'],
    ['a whole frame longer than FRAME_TEXT_CHARS', 'A'.repeat(FRAME_TEXT_CHARS + 4)],
    ['a chunk without its fields', '~abc'],
    ['an empty id', '~:0/2:AAAA'],
    ['an id of 17 characters', `~${'a'.repeat(17)}:0/2:AAAA`],
    ['an id with a dot', '~a.b:0/2:AAAA'],
    ['an index equal to the count', '~a:2/2:AAAA'],
    ['an index above the count', '~a:5/2:AAAA'],
    ['a count of 1', '~a:0/1:AAAA'],
    ['a count of 0', '~a:0/0:AAAA'],
    [`a count above MAX_CLIENT_CHUNKS`, `~a:0/${MAX_CLIENT_CHUNKS + 1}:AAAA`],
    ['an index with a leading zero', '~a:01/2:AAAA'],
    ['a negative index', '~a:-1/2:AAAA'],
    ['a non-decimal count', '~a:0/0x2:AAAA'],
    ['an empty part', '~a:0/2:'],
    ['a part longer than FRAME_TEXT_CHARS', `~a:0/2:${'A'.repeat(FRAME_TEXT_CHARS + 1)}`],
    ['a part with a non-base64 character', '~a:0/2:AA-A'],
  ])('refuses %s', (_name, text) => {
    const message = malformed(() => parseFrame(text));

    expect(message).toMatch(/^Malformed frame: /);
  });

  it('takes a count of exactly MAX_CLIENT_CHUNKS and a part of exactly FRAME_TEXT_CHARS', () => {
    expect(
      parseFrame(`~a:${MAX_CLIENT_CHUNKS - 1}/${MAX_CLIENT_CHUNKS}:${'A'.repeat(FRAME_TEXT_CHARS)}`),
    ).toMatchObject({
      kind: 'chunk',
      index: MAX_CLIENT_CHUNKS - 1,
      count: MAX_CLIENT_CHUNKS,
    });
  });

  it('refuses joined parts that are not canonical base64', () => {
    malformed(() => joinChunks(['AAA', 'A=']));
    malformed(() => joinChunks(['AAAA', 'AB==']));
    malformed(() => joinChunks(['AA', 'AA', '=']));
  });

  it('refuses joined parts that decode to more than MAX_CLIENT_MESSAGE_BYTES', () => {
    const frames = encodeFrames(bytes(MAX_CLIENT_MESSAGE_BYTES + 1), 'a');
    const parts = frames.map((frame) => parseFrameUnbounded(frame).part);

    const message = malformed(() => joinChunks(parts));

    expect(message).toContain(String(MAX_CLIENT_MESSAGE_BYTES));
  });

  it('has the browser adapter refuse the same malformed frames', () => {
    for (const text of [
      '',
      'AA',
      'AB==',
      'AAAA AAAA',
      '-_-_',
      '~a:2/2:AAAA',
      '~a:0/1:AAAA',
      '~a.b:0/2:AAAA',
      '~a:0/2:',
    ]) {
      expect(() => new FrameReader().read(text)).toThrow(JsMalformedFrameError);
    }
  });
});

describe('live framing: the browser adapter and the service agree', () => {
  it.each([
    ['one byte', 1],
    ['at the threshold', AT_THRESHOLD],
    ['one byte over the threshold', AT_THRESHOLD + 1],
    ['300 KB', 300 * 1024],
    ['1 MiB, the client maximum', MAX_CLIENT_MESSAGE_BYTES],
  ])('frames the adapter encodes (%s) are the service encoding, and parse with the service codec', (_name, size) => {
    const message = bytes(size, size);

    const frames = jsEncodeFrames(message, 'k2');

    expect(frames).toEqual(encodeFrames(message, 'k2'));
    expectSameBytes(serverRead(frames), message);
  });

  it.each([
    ['one byte', 1],
    ['two bytes', 2],
    ['at the threshold', AT_THRESHOLD],
    ['one byte over the threshold', AT_THRESHOLD + 1],
    ['300 KB', 300 * 1024],
    ['2 MB', 2 * 1024 * 1024],
  ])('frames the service encodes (%s) are reassembled by the adapter', (_name, size) => {
    const message = bytes(size, size + 1);

    expectSameBytes(browserRead(encodeFrames(message, 'srv')), message);
  });

  it('reassembles chunks of several messages interleaved with whole frames, in any order', () => {
    const big = bytes(100_000, 3);
    const other = bytes(50_000, 4);
    const small = bytes(50, 5);
    const [a0, a1, a2, a3, a4] = encodeFrames(big, '1');
    const [b0, b1, b2] = encodeFrames(other, '2');
    const [whole] = encodeFrames(small, '3');
    const reader = new FrameReader();

    const delivered = [a0, b2, whole, a3, b0, a1, b1, a4, a2]
      .map((frame) => reader.read(frame))
      .filter((message) => message !== null);

    expect(delivered).toHaveLength(3);
    expectSameBytes(delivered[0]!, small);
    expectSameBytes(delivered[1]!, other);
    expectSameBytes(delivered[2]!, big);
  });

  it('has the adapter refuse a chunk that comes twice or disagrees on the count', () => {
    const [first] = encodeFrames(bytes(100_000), '1');
    const reader = new FrameReader();
    reader.read(first);

    expect(() => reader.read(first)).toThrow(JsMalformedFrameError);
    expect(() => reader.read(first.replace('/5:', '/6:'))).toThrow(JsMalformedFrameError);
  });
});

describe('live framing batches: several whole messages in one frame', () => {
  /** The messages a batch frame carries, read with the service's codec. */
  function batchRead(frame: string): Uint8Array[] {
    const parsed = parseFrame(frame);
    if (parsed.kind !== 'batch') throw new Error(`a ${parsed.kind} frame, not a batch`);
    return parsed.messages;
  }

  it.each([
    ['two one-byte messages', [bytes(1, 1), bytes(1, 2)]],
    ['an update and its caret move', [bytes(120, 3), bytes(40, 4)]],
    ['ten messages of every length mod 3', Array.from({ length: 10 }, (_, i) => bytes(i + 1, i + 5))],
  ])('are the same frame from the adapter and the service, %s, read back in order', (_name, messages) => {
    const frame = jsEncodeBatch(messages);

    expect(frame).toBe(encodeBatch(messages));
    expect(frame.startsWith('!')).toBe(true);
    const read = batchRead(frame);
    expect(read).toHaveLength(messages.length);
    read.forEach((message, i) => expectSameBytes(message, messages[i]));
  });

  it('take texts and commas of exactly FRAME_TEXT_CHARS, within API Gateway frame limits, and refuse one character more', () => {
    // 5 messages: texts of 15,000 + 14,972 + 3 × 8 characters (4 per 3 bytes) and 4 commas are 30,000.
    const first = bytes(AT_THRESHOLD / 2, 1);
    const second = bytes(11_229, 2);
    const fits = [first, second, bytes(4, 3), bytes(4, 4), bytes(4, 5)];
    const over = [first, second, bytes(4, 3), bytes(4, 4), bytes(7, 5)];

    const frame = encodeBatch(fits);

    expect(frame.length).toBe(FRAME_TEXT_CHARS + 1);
    expect(Buffer.byteLength(frame)).toBeLessThanOrEqual(API_GATEWAY_FRAME_BYTES);
    expect(jsEncodeBatch(fits)).toBe(frame);
    expect(batchRead(frame)).toHaveLength(5);
    expect(() => encodeBatch(over)).toThrow(RangeError);
    expect(() => jsEncodeBatch(over)).toThrow(RangeError);
    expect(malformed(() => parseFrame(`${frame.slice(0, -4)}AAAAAA==`))).toMatch(/at most 30000 characters/);
  });

  it('are not made of fewer than 2 messages or of an empty one, by either encoder', () => {
    for (const encode of [encodeBatch, jsEncodeBatch]) {
      expect(() => encode([bytes(3)])).toThrow(RangeError);
      expect(() => encode([bytes(3), new Uint8Array(0)])).toThrow(RangeError);
    }
  });

  it.each([
    ['a batch mark alone', '!'],
    ['one message', '!AAEC'],
    ['an empty last part', '!AAEC,'],
    ['an empty first part', '!,AAEC'],
    ['an empty part between two', '!AAEC,,AAEC'],
    ['a part with non-zero padding bits', '!AAEC,AAF='],
    ['a part in URL-safe base64', '!AAEC,-_-_'],
    ['a chunk inside', '!AAEC,~a:0/2:AAAA'],
    ['whitespace between parts', '!AAEC, AAEC'],
  ])('are malformed with %s', (_name, frame) => {
    expect(malformed(() => parseFrame(frame))).toMatch(/^Malformed frame: /);
  });
});

describe('live framing: what the service sends one connection at once', () => {
  const sized = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) % 251);

  it('packs consecutive messages into as few frames as fit, chunks one too large for a frame, and keeps the order', () => {
    // 9,000 bytes are 12,000 base64 characters: two share a frame, a third does not fit beside them.
    const messages = [sized(9_000, 1), sized(9_000, 2), sized(9_000, 3), sized(40_000, 4), sized(10, 5), sized(10, 6)];
    let id = 0;

    const frames = encodeMessages(messages, () => `m${id++}`);

    expect(frames.map((frame) => parseFrame(frame).kind)).toEqual(['batch', 'whole', 'chunk', 'chunk', 'batch']);
    expect(frames.every((frame) => frame.length <= FRAME_TEXT_CHARS + 1 + 40)).toBe(true);
    const reader = new FrameReader();
    const read = frames.flatMap((frame) => reader.readAll(frame));
    expect(read.map((message) => Buffer.from(message).toString('base64'))).toEqual(
      messages.map((message) => Buffer.from(message).toString('base64')),
    );
  });

  it('sends one message alone as it always did', () => {
    const message = sized(100, 7);
    expect(encodeMessages([message], () => 'x')).toEqual(encodeFrames(message, 'x'));
  });
});
