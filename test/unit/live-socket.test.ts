/**
 * The browser's live-sync socket adapter (clients/live-socket.js) against an in-test server that behaves like an
 * API Gateway WebSocket API (connections only at the stage URL, 1003 on a binary frame, 1009 on a text frame over
 * 32 KB) and reads and writes with the service's codec (shared/domain/live/framing.ts); then the stock y-websocket
 * provider over the adapter.
 */
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import * as Y from 'yjs';
import * as encoding from 'lib0/encoding';
import * as decoding from 'lib0/decoding';
import * as syncProtocol from 'y-protocols/sync';
import * as authProtocol from 'y-protocols/auth';
import * as awarenessProtocol from 'y-protocols/awareness';
import { WebsocketProvider } from 'y-websocket';
import {
  API_GATEWAY_FRAME_BYTES,
  MAX_CLIENT_MESSAGE_BYTES,
  MalformedFrameError,
  encodeBatch,
  encodeFrames,
  joinChunks,
  parseFrame,
} from '../../shared/domain/live/framing';
import {
  LiveSocket,
  createLiveSocket,
  liveUrl,
  type LiveCloseEvent,
  type LiveSocketInstance,
} from '../../clients/live-socket.js';
import { waitFor } from '../support/wait';
import { awarenessEntries, awarenessMessage, type AwarenessTestEntry } from '../support/awareness-messages';

const STAGE = '/prod';

interface GatewayConnection {
  path: string;
  query: URLSearchParams;
  socket: WebSocket;
  /** The text frames the client sent, as they came. */
  frames: string[];
  /** The protocol messages the client sent, reassembled with the service's codec. */
  received: Uint8Array[];
  /** The close as the server saw it. */
  closed: { code: number; reason: string } | null;
  /** Sends a protocol message as the service does: its frames, chunked where needed. */
  send(message: Uint8Array): void;
}

/**
 * A server with API Gateway's WebSocket limits, speaking the service's framing: what the adapter meets in AWS, with
 * the handlers' part reduced to a callback per message.
 */
class FakeApiGateway {
  readonly connections: GatewayConnection[] = [];
  /** Paths refused at the upgrade, as API Gateway refuses any path after its stage. */
  readonly refused: string[] = [];
  onMessage: (connection: GatewayConnection, message: Uint8Array) => void = () => {};
  private server: WebSocketServer | undefined;
  url = '';

  async start(): Promise<void> {
    const server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: ({ req }, done) => {
        const path = new URL(req.url ?? '/', 'http://gateway').pathname;
        if (path === STAGE) return done(true);
        this.refused.push(path);
        done(false, 403, 'Forbidden');
      },
    });
    server.on('connection', (socket, req) => this.accept(socket, new URL(req.url ?? '/', 'http://gateway')));
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    this.server = server;
    const { port } = server.address() as { port: number };
    this.url = `ws://127.0.0.1:${port}${STAGE}`;
  }

  async stop(): Promise<void> {
    for (const client of this.server?.clients ?? []) client.terminate();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private accept(socket: WebSocket, url: URL): void {
    let nextId = 0;
    const chunks = new Map<string, string[]>();
    const connection: GatewayConnection = {
      path: url.pathname,
      query: url.searchParams,
      socket,
      frames: [],
      received: [],
      closed: null,
      send: (message) => {
        for (const frame of encodeFrames(message, String(nextId++))) socket.send(frame);
      },
    };
    this.connections.push(connection);
    socket.on('close', (code, reason) => (connection.closed = { code, reason: reason.toString() }));
    socket.on('message', (data: Buffer, isBinary) => {
      if (isBinary) return socket.close(1003, 'Binary frames are not supported');
      if (data.length > API_GATEWAY_FRAME_BYTES) return socket.close(1009, 'Frame too big');
      connection.frames.push(data.toString('utf8'));
      let messages: Uint8Array[];
      try {
        const frame = parseFrame(data.toString('utf8'));
        if (frame.kind === 'whole') messages = [frame.message];
        else if (frame.kind === 'batch') messages = frame.messages;
        else {
          const parts = chunks.get(frame.id) ?? new Array<string>(frame.count);
          chunks.set(frame.id, parts);
          parts[frame.index] = frame.part;
          if (Object.keys(parts).length < frame.count) return;
          chunks.delete(frame.id);
          messages = [joinChunks(parts)];
        }
      } catch (error) {
        if (!(error instanceof MalformedFrameError)) throw error;
        return socket.close(1009, error.message.slice(0, 100));
      }
      for (const message of messages) {
        connection.received.push(message);
        this.onMessage(connection, message);
      }
    });
  }
}

/** An adapter socket (over the `ws` package's WebSocket, as Node 20 has no global one) and what it reported. */
function openLive(url: string, binaryType: 'arraybuffer' | 'blob' = 'arraybuffer') {
  const Live = createLiveSocket(WebSocket);
  const socket = new Live(url);
  socket.binaryType = binaryType;
  const seen = { opened: false, messages: [] as unknown[], closes: [] as LiveCloseEvent[], errors: 0 };
  socket.onopen = () => (seen.opened = true);
  socket.onmessage = (event) => seen.messages.push(event.data);
  socket.onclose = (event) => seen.closes.push(event);
  socket.onerror = () => (seen.errors += 1);
  return { socket, seen };
}

/** `size` bytes of a fixed pseudo-random pattern; the first byte is 0 (a sync message), so none is an auth message. */
function bytes(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let state = seed;
  for (let i = 0; i < size; i += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    out[i] = state >>> 24;
  }
  out[0] = 0;
  return out;
}

/** Byte equality without jest's element-by-element walk of megabyte arrays. */
function sameBytes(actual: Uint8Array | ArrayBuffer | unknown, expected: Uint8Array): boolean {
  if (!(actual instanceof ArrayBuffer) && !(actual instanceof Uint8Array)) return false;
  return Buffer.from(actual instanceof ArrayBuffer ? new Uint8Array(actual) : actual).equals(expected);
}

function authDenied(reason: string): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, 2);
  authProtocol.writePermissionDenied(encoder, reason);
  return encoding.toUint8Array(encoder);
}

/** An awareness message (varuint 1, then the y-protocols awareness update) of `entries`, as the service sends one. */
/** The entries of the awareness messages among `messages`, one list per message. */
function awarenessSent(messages: readonly Uint8Array[]): AwarenessTestEntry[][] {
  return messages.flatMap((message) => {
    const entries = awarenessEntries(message);
    return entries === null ? [] : [entries];
  });
}

let gateway: FakeApiGateway;
const sockets: LiveSocketInstance[] = [];

beforeEach(async () => {
  gateway = new FakeApiGateway();
  await gateway.start();
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await gateway.stop();
});

function track<T extends { socket: LiveSocketInstance }>(opened: T): T {
  sockets.push(opened.socket);
  return opened;
}

describe('live socket URL', () => {
  it('moves the room from the last path segment to the query and asks for base64', () => {
    expect(liveUrl('wss://abc.execute-api.eu-west-1.amazonaws.com/prod/room-1?token=t.k%2B1')).toBe(
      'wss://abc.execute-api.eu-west-1.amazonaws.com/prod?token=t.k%2B1&room=room-1&encoding=base64',
    );
  });

  it('keeps the room as one query value whatever it holds, and works at the root', () => {
    expect(liveUrl('ws://127.0.0.1:3001/a b:c&d?token=x')).toBe(
      'ws://127.0.0.1:3001/?token=x&room=a%20b%3Ac%26d&encoding=base64',
    );
  });

  it('refuses a URL without a room', () => {
    expect(() => liveUrl('ws://127.0.0.1:3001/')).toThrow(TypeError);
  });
});

describe('live socket class', () => {
  it('has the WebSocket state constants, static and on the instance, and mirrors readyState', async () => {
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));

    const Live = createLiveSocket(WebSocket);
    expect([Live.CONNECTING, Live.OPEN, Live.CLOSING, Live.CLOSED]).toEqual([0, 1, 2, 3]);
    expect(socket).toMatchObject({ CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 });
    expect(socket.readyState).toBe(socket.CONNECTING);
    await waitFor(() => seen.opened, { what: 'the socket to open' });
    expect(socket.readyState).toBe(socket.OPEN);
    socket.close(1000, 'bye');
    await waitFor(() => seen.closes.length === 1, { what: 'the close' });
    expect(socket.readyState).toBe(socket.CLOSED);
    expect(seen.closes[0]).toMatchObject({ code: 1000, reason: 'bye' });
  });

  it('loads in Node as the ES module it ships as, untransformed, and has LiveSocket exactly where a global WebSocket is', () => {
    // The tests here import the module through jest's transform; this is the file itself, as a browser or Node has it.
    const script = `
      const live = await import(${JSON.stringify(join(__dirname, '..', '..', 'clients', 'live-socket.js'))});
      const [frame] = live.encodeFrames(new Uint8Array([0, 1, 2]), 'a');
      console.log(JSON.stringify({ frame, read: [...new live.FrameReader().read(frame)], liveSocket: typeof live.LiveSocket, globalWebSocket: typeof WebSocket }));
    `;

    const output = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    );

    expect(output).toMatchObject({ frame: 'AAEC', read: [0, 1, 2] });
    expect(output.liveSocket).toBe(output.globalWebSocket === 'function' ? 'function' : 'undefined');
  });

  it('needs a WebSocket implementation where there is no global one', () => {
    expect(() => createLiveSocket(null as never)).toThrow(TypeError);
    expect(LiveSocket === undefined).toBe(typeof globalThis.WebSocket !== 'function');
  });
});

describe('live socket against an API Gateway-like server', () => {
  it('the server refuses what API Gateway refuses: a path after the stage, a binary frame, a text frame over 32 KB', async () => {
    const atRoom = new WebSocket(`${gateway.url}/room-1`);
    const refusal = new Promise<void>((resolve) => atRoom.on('error', () => resolve()));
    await refusal;
    const binary = new WebSocket(gateway.url);
    const text = new WebSocket(gateway.url);
    await waitFor(() => binary.readyState === WebSocket.OPEN && text.readyState === WebSocket.OPEN, {
      what: 'the raw sockets to open',
    });

    binary.send(new Uint8Array([0, 0, 1, 0]));
    text.send('A'.repeat(API_GATEWAY_FRAME_BYTES + 4));

    expect(gateway.refused).toEqual([`${STAGE}/room-1`]);
    await waitFor(() => gateway.connections.every((connection) => connection.closed !== null), {
      what: 'the server to close both',
    });
    expect(gateway.connections.map((connection) => connection.closed?.code).sort()).toEqual([1003, 1009]);
  });

  it('opens at the stage URL with the room, the provider parameters and encoding=base64 in the query', async () => {
    const { seen } = track(openLive(`${gateway.url}/room-1?token=abc`));

    await waitFor(() => seen.opened, { what: 'the socket to open' });

    expect(gateway.refused).toEqual([]);
    expect(gateway.connections).toHaveLength(1);
    expect(gateway.connections[0].path).toBe(STAGE);
    expect(Object.fromEntries(gateway.connections[0].query)).toEqual({
      token: 'abc',
      room: 'room-1',
      encoding: 'base64',
    });
  });

  it.each([
    ['a small', 40],
    ['a 300 KB', 300 * 1024],
    ['a 1 MiB (the client maximum)', MAX_CLIENT_MESSAGE_BYTES],
  ])(
    'carries %s message to the server and back intact, in text frames within API Gateway limits',
    async (_name, size) => {
      gateway.onMessage = (connection, message) => connection.send(message);
      const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
      await waitFor(() => seen.opened, { what: 'the socket to open' });
      const message = bytes(size, size);

      socket.send(message);

      await waitFor(() => seen.messages.length === 1 || seen.closes.length > 0, { what: 'the echo' });
      expect(seen.closes).toEqual([]);
      expect(gateway.connections[0].received).toHaveLength(1);
      expect(sameBytes(gateway.connections[0].received[0], message)).toBe(true);
      expect(seen.messages[0]).toBeInstanceOf(ArrayBuffer);
      expect(sameBytes(seen.messages[0], message)).toBe(true);
    },
  );

  it('receives a 2 MB message (a document) from the server intact', async () => {
    const { seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => gateway.connections.length === 1 && seen.opened, { what: 'the socket to open' });
    const message = bytes(2 * 1024 * 1024, 7);

    gateway.connections[0].send(message);

    await waitFor(() => seen.messages.length === 1, { what: 'the 2 MB message' });
    expect(sameBytes(seen.messages[0], message)).toBe(true);
  });

  it('sends a 2 MB message in frames API Gateway takes, which the service then refuses as over the client limit', async () => {
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    socket.send(bytes(2 * 1024 * 1024, 8));

    await waitFor(() => seen.closes.length === 1, { what: 'the close' });
    expect(gateway.connections[0].closed?.reason).toMatch(/at most 1048576 bytes/);
    expect(gateway.connections[0].received).toEqual([]);
  });

  it('interleaves its own messages correctly with the server chunking several messages at once', async () => {
    const { seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => gateway.connections.length === 1 && seen.opened, { what: 'the socket to open' });
    const big = bytes(100_000, 1);
    const small = bytes(10, 2);
    const [b0, b1, b2, b3, b4] = encodeFrames(big, 'b');
    const [s0] = encodeFrames(small, 's');
    const server = gateway.connections[0].socket;

    for (const frame of [b0, b1, s0, b2, b3, b4]) server.send(frame);

    await waitFor(() => seen.messages.length === 2, { what: 'both messages' });
    expect(sameBytes(seen.messages[0], small)).toBe(true);
    expect(sameBytes(seen.messages[1], big)).toBe(true);
  });

  it('delivers the messages of a batch frame from the server one by one, in order', async () => {
    const { seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });
    const messages = [bytes(40, 4), bytes(300, 5), bytes(7, 6)];

    gateway.connections[0].socket.send(encodeBatch(messages));

    await waitFor(() => seen.messages.length === 3, { what: 'the three messages' });
    seen.messages.forEach((message, i) => expect(sameBytes(message, messages[i])).toBe(true));
    expect(seen.closes).toEqual([]);
  });

  it('closes with 1002 on a batch frame from the server with a part not of the format, delivering none of it', async () => {
    const { seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    gateway.connections[0].socket.send(`${encodeBatch([bytes(40, 4), bytes(30, 5)])},not*base64`);

    await waitFor(() => seen.closes.length === 1, { what: 'the close' });
    expect(seen.closes[0].code).toBe(1002);
    expect(seen.messages).toEqual([]);
  });

  it('sends what is sent in one tick as one batch frame, the messages in order', async () => {
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });
    const messages = [bytes(30, 1), bytes(200, 2), bytes(5, 3)];

    for (const message of messages) socket.send(message);

    await waitFor(() => gateway.connections[0].received.length === 3, { what: 'the three messages' });
    expect(gateway.connections[0].frames).toEqual([encodeBatch(messages)]);
    gateway.connections[0].received.forEach((message, i) => expect(sameBytes(message, messages[i])).toBe(true));
  });

  it('sends a message alone in a tick as a whole frame, as before batches', async () => {
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    socket.send(bytes(30, 1));

    await waitFor(() => gateway.connections[0].received.length === 1, { what: 'the message' });
    expect(gateway.connections[0].frames).toEqual(encodeFrames(bytes(30, 1), 'x'));
  });

  it('keeps the order around a message too large for a batch, which goes in chunks, and starts a new frame past 30,000 characters', async () => {
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });
    // 100 KB goes in chunks; the three 9,000-byte messages (12,000 characters each) fill two frames, 2 and 1.
    const messages = [bytes(10, 1), bytes(100_000, 2), bytes(9_000, 3), bytes(9_000, 4), bytes(9_000, 5), bytes(10, 6)];

    for (const message of messages) socket.send(message);

    await waitFor(() => gateway.connections[0].received.length === messages.length || seen.closes.length > 0, {
      what: 'every message',
    });
    expect(seen.closes).toEqual([]);
    gateway.connections[0].received.forEach((message, i) => expect(sameBytes(message, messages[i])).toBe(true));
    const kinds = gateway.connections[0].frames.map((frame) => parseFrame(frame).kind);
    expect(kinds).toEqual(['whole', 'chunk', 'chunk', 'chunk', 'chunk', 'chunk', 'batch', 'batch']);
    expect(gateway.connections[0].frames.every((frame) => Buffer.byteLength(frame) <= API_GATEWAY_FRAME_BYTES)).toBe(
      true,
    );
  });

  it('sends what waits for the end of the tick before it closes', async () => {
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    socket.send(bytes(30, 1));
    socket.send(bytes(30, 2));
    socket.close(1000);

    await waitFor(() => gateway.connections[0].closed !== null, { what: 'the close' });
    expect(gateway.connections[0].received).toHaveLength(2);
  });

  it('delivers a Blob when binaryType is left at blob', async () => {
    gateway.onMessage = (connection, message) => connection.send(message);
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`, 'blob'));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    socket.send(new Uint8Array([0, 1, 2]).buffer);

    await waitFor(() => seen.messages.length === 1, { what: 'the echo' });
    expect(seen.messages[0]).toBeInstanceOf(Blob);
    expect(new Uint8Array(await (seen.messages[0] as Blob).arrayBuffer())).toEqual(new Uint8Array([0, 1, 2]));
  });

  it('delivers an auth denial, then reports close 4403 with its reason, whatever code the server closed with', async () => {
    gateway.onMessage = (connection) => {
      connection.send(authDenied('User has no access to this document.'));
      connection.socket.close(1000);
    };
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    socket.send(bytes(5));

    await waitFor(() => seen.closes.length === 1, { what: 'the close' });
    expect(seen.messages).toHaveLength(1);
    expect(sameBytes(seen.messages[0], authDenied('User has no access to this document.'))).toBe(true);
    expect(seen.closes[0]).toMatchObject({ code: 4403, reason: 'User has no access to this document.' });
  });

  it.each([
    ["Message too large: a client's message is at most 1048576 bytes.", 1009],
    ['Too many messages.', 1013],
  ])('reports the refusal "%s" as close %i, after which the provider reconnects', async (reason, code) => {
    gateway.onMessage = (connection) => {
      connection.send(authDenied(reason));
      connection.socket.close(1000);
    };
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    socket.send(bytes(5));

    await waitFor(() => seen.closes.length === 1, { what: 'the close' });
    expect(seen.closes[0]).toMatchObject({ code, reason });
  });

  it('closes the connection itself after an auth denial when the server does not, and delivers nothing after it', async () => {
    gateway.onMessage = (connection) => {
      connection.send(authDenied('Room is full.'));
      connection.send(bytes(20));
    };
    const { socket, seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => seen.opened, { what: 'the socket to open' });

    socket.send(bytes(5));

    await waitFor(() => seen.closes.length === 1, { what: 'the close' });
    expect(seen.messages).toHaveLength(1);
    expect(seen.closes[0]).toMatchObject({ code: 4403, reason: 'Room is full.' });
    await waitFor(() => gateway.connections[0].closed !== null, { what: 'the server to see the close' });
    expect(gateway.connections[0].closed?.code).toBe(4403);
  });

  it.each([
    ['text that is not base64', (server: WebSocket) => server.send('not base64!')],
    ['a chunk with a bad count', (server: WebSocket) => server.send('~a:0/1:AAAA')],
    ['a binary frame', (server: WebSocket) => server.send(new Uint8Array([0, 0]))],
  ])('closes with 1002 on %s from the server, and delivers nothing', async (_name, sendMalformed) => {
    const { seen } = track(openLive(`${gateway.url}/room-1`));
    await waitFor(() => gateway.connections.length === 1 && seen.opened, { what: 'the socket to open' });

    sendMalformed(gateway.connections[0].socket);

    await waitFor(() => seen.closes.length === 1, { what: 'the close' });
    expect(seen.messages).toEqual([]);
    expect(seen.closes[0].code).toBe(1002);
    expect(seen.closes[0].reason).toMatch(/^Malformed frame: /);
  });
});

describe('the stock y-websocket provider over the live socket', () => {
  const providers: WebsocketProvider[] = [];
  afterEach(() => {
    for (const provider of providers.splice(0)) {
      provider.destroy();
      // The awareness the provider made has a timer of its own, which it stops when its document is destroyed.
      provider.doc.destroy();
    }
  });

  /** A provider as a browser app builds it on AWS, over `ws`; `opened` counts the sockets it made. */
  function provide(doc: Y.Doc, options: { maxBackoffTime?: number } = {}) {
    const counter = { opened: 0 };
    const Live = createLiveSocket(WebSocket);
    class Counted extends Live {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        counter.opened += 1;
      }
    }
    const provider = new WebsocketProvider(gateway.url, 'doc-1', doc, {
      params: { token: 'tok' },
      WebSocketPolyfill: Counted as unknown as typeof globalThis.WebSocket,
      disableBc: true,
      ...options,
    });
    providers.push(provider);
    return { provider, counter };
  }

  it('opens against the server, whose first message is the provider sync step 1 intact', async () => {
    const doc = new Y.Doc();
    doc.getText('t').insert(0, 'hello');
    const expected = encoding.createEncoder();
    encoding.writeVarUint(expected, 0);
    syncProtocol.writeSyncStep1(expected, doc);

    provide(doc);

    await waitFor(() => gateway.connections.length === 1 && gateway.connections[0].received.length >= 1, {
      what: 'sync step 1',
    });
    expect(Object.fromEntries(gateway.connections[0].query)).toEqual({
      token: 'tok',
      room: 'doc-1',
      encoding: 'base64',
    });
    expect(sameBytes(gateway.connections[0].received[0], encoding.toUint8Array(expected))).toBe(true);
  });

  it('sends sync step 1 and its presence on open as one frame, and an edit with its caret move as one more', async () => {
    const doc = new Y.Doc();
    const { provider } = provide(doc);
    await waitFor(() => gateway.connections.length === 1 && gateway.connections[0].received.length === 2, {
      what: 'the first messages',
    });
    const connection = gateway.connections[0];

    doc.getText('t').insert(0, 'typed');
    provider.awareness.setLocalStateField('cursor', 5);

    await waitFor(() => connection.received.length === 4, { what: 'the edit and the caret' });
    expect(connection.frames.map((frame) => parseFrame(frame).kind)).toEqual(['batch', 'batch']);
    expect(connection.received.map((message) => message[0])).toEqual([0, 1, 0, 1]);
    expect(awarenessSent(connection.received.slice(3))[0][0].state).toEqual({ cursor: 5 });
  });

  it('syncs a 2 MB document down and a 300 KB edit up', async () => {
    const serverDoc = new Y.Doc();
    serverDoc.getText('t').insert(0, 'abcdefghij'.repeat(200 * 1024));
    gateway.onMessage = (connection, message) => {
      const decoder = decoding.createDecoder(message);
      if (decoding.readVarUint(decoder) !== 0) return;
      const reply = encoding.createEncoder();
      encoding.writeVarUint(reply, 0);
      syncProtocol.readSyncMessage(decoder, reply, serverDoc, 'client');
      if (encoding.length(reply) > 1) connection.send(encoding.toUint8Array(reply));
    };
    const doc = new Y.Doc();
    const { provider } = provide(doc);

    await waitFor(() => provider.synced, { what: 'the provider to sync' });
    expect(doc.getText('t').toString()).toBe(serverDoc.getText('t').toString());
    doc.getText('t').insert(0, 'klmnopqrst'.repeat(30 * 1024));

    await waitFor(() => serverDoc.getText('t').length === doc.getText('t').length, { what: 'the edit on the server' });
    expect(serverDoc.getText('t').toString()).toBe(doc.getText('t').toString());
    expect(gateway.connections).toHaveLength(1);
    expect(gateway.connections[0].closed).toBeNull();
  });

  it('emits closed with 4403 on an auth denial and does not reconnect', async () => {
    gateway.onMessage = (connection) => {
      connection.send(authDenied('Access revoked.'));
      connection.socket.close(1000);
    };
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    const { provider, counter } = provide(new Y.Doc(), { maxBackoffTime: 10 });
    let closed: { code: number; reason: string } | undefined;
    // The provider schedules its next attempt (after at most maxBackoffTime) before it emits `closed`; a timer of the
    // same length set in the handler fires after it, so by then a reconnect would have made its socket.
    const attemptPassed = new Promise<void>((resolve) =>
      provider.on('closed', (event) => {
        closed = event;
        setTimeout(resolve, 10);
      }),
    );

    await attemptPassed;

    expect(closed).toEqual({ code: 4403, reason: 'Access revoked.' });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('Access revoked.'));
    expect(provider.shouldConnect).toBe(false);
    expect(counter.opened).toBe(1);
    warn.mockRestore();
  });

  describe("presence: only the local client's own goes out", () => {
    const REMOTE = 4_000_000_001;

    /** A provider whose connection is open and has announced its own presence to the server. */
    async function announced() {
      const doc = new Y.Doc();
      const { provider } = provide(doc);
      await waitFor(
        () => gateway.connections.length === 1 && awarenessSent(gateway.connections[0].received).length >= 1,
        { what: 'the own presence on open' },
      );
      return { doc, provider, connection: gateway.connections[0] };
    }

    const ids = (connection: GatewayConnection) =>
      awarenessSent(connection.received).map((entries) => entries.map((entry) => entry.clientId));

    it("does not send back a remote client's state or its removal, and sends the local client's changes", async () => {
      const { doc, provider, connection } = await announced();

      connection.send(awarenessMessage([{ clientId: REMOTE, clock: 1, state: { user: 'Zed', cursor: 3 } }]));
      await waitFor(() => provider.awareness.getStates().get(REMOTE)?.user === 'Zed', {
        what: 'the remote state at the provider',
      });
      connection.send(awarenessMessage([{ clientId: REMOTE, clock: 2, state: null }]));
      await waitFor(() => !provider.awareness.getStates().has(REMOTE), { what: 'the remote removal at the provider' });
      provider.awareness.setLocalStateField('cursor', 7);

      // The socket keeps order: an echo, sent as the provider applied the remote message, would be in before this.
      await waitFor(
        () =>
          awarenessSent(connection.received).some((entries) =>
            entries.some((entry) => (entry.state as { cursor?: number } | null)?.cursor === 7),
          ),
        { what: 'the local change' },
      );
      expect(ids(connection)).toEqual([[doc.clientID], [doc.clientID]]);
    });

    it("sends the local client's removal when the provider is destroyed", async () => {
      const { doc, provider, connection } = await announced();
      connection.send(awarenessMessage([{ clientId: REMOTE, clock: 1, state: { user: 'Zed' } }]));
      await waitFor(() => provider.awareness.getStates().has(REMOTE), { what: 'the remote state at the provider' });

      provider.destroy();

      await waitFor(() => connection.closed !== null, { what: 'the close' });
      const sent = awarenessSent(connection.received);
      expect(sent.map((entries) => entries.map((entry) => entry.clientId))).toEqual([[doc.clientID], [doc.clientID]]);
      // At the clock of the last state (y-websocket's goodbye): a stock client applies a null state at an equal clock.
      expect(sent[1][0]).toMatchObject({ state: null, clock: sent[0][0].clock });
    });

    it("keeps only the local client's entry of a message that holds both (the answer to a presence query)", async () => {
      const { doc, provider, connection } = await announced();
      provider.awareness.setLocalStateField('user', 'Ann');
      connection.send(
        awarenessMessage([
          { clientId: REMOTE, clock: 1, state: { user: 'Zed' } },
          { clientId: REMOTE + 1, clock: 5, state: { user: 'Yan' } },
        ]),
      );
      await waitFor(() => provider.awareness.getStates().size === 3, { what: 'the remote states at the provider' });

      // y-websocket's messageQueryAwareness: the provider answers with every state it knows.
      connection.send(new Uint8Array([3]));

      await waitFor(() => awarenessSent(connection.received).length === 3, { what: 'the answer to the query' });
      const answer = awarenessSent(connection.received)[2];
      expect(answer).toEqual([
        { clientId: doc.clientID, clock: provider.awareness.meta.get(doc.clientID)?.clock, state: { user: 'Ann' } },
      ]);
      // What went out is a well-formed awareness message that a stock client applies.
      const other = new awarenessProtocol.Awareness(new Y.Doc());
      const decoder = decoding.createDecoder(connection.received[connection.received.length - 1]);
      decoding.readVarUint(decoder);
      awarenessProtocol.applyAwarenessUpdate(other, decoding.readVarUint8Array(decoder), 'test');
      expect(other.getStates().get(doc.clientID)).toEqual({ user: 'Ann' });
      other.destroy();
    });

    it('learns afresh after a reconnect: the own state goes out again, remote ones still do not', async () => {
      const { doc, provider, connection } = await announced();
      connection.send(awarenessMessage([{ clientId: REMOTE, clock: 1, state: { user: 'Zed' } }]));
      await waitFor(() => provider.awareness.getStates().has(REMOTE), { what: 'the remote state at the provider' });

      connection.socket.close(1000);
      await waitFor(
        () => gateway.connections.length === 2 && awarenessSent(gateway.connections[1].received).length >= 1,
        { what: 'the reconnect and its own presence' },
      );
      const again = gateway.connections[1];
      again.send(awarenessMessage([{ clientId: REMOTE, clock: 3, state: { user: 'Zed', cursor: 1 } }]));
      await waitFor(() => provider.awareness.getStates().get(REMOTE)?.cursor === 1, {
        what: 'the remote state after the reconnect',
      });
      provider.awareness.setLocalStateField('cursor', 9);

      await waitFor(() => awarenessSent(again.received).length === 2, { what: 'the local change after the reconnect' });
      expect(ids(again)).toEqual([[doc.clientID], [doc.clientID]]);
      expect(awarenessSent(again.received)[1][0].state).toMatchObject({ cursor: 9 });
    });
  });

  it('reconnects after a close without an auth denial (the same server, the same close code)', async () => {
    gateway.onMessage = (connection) => {
      if (gateway.connections.length === 1) connection.socket.close(1000);
    };
    const { provider, counter } = provide(new Y.Doc(), { maxBackoffTime: 10 });
    const closes: unknown[] = [];
    provider.on('closed', (event) => closes.push(event));

    await waitFor(() => counter.opened === 2 && gateway.connections.length === 2, { what: 'the reconnect' });

    expect(closes).toEqual([]);
    expect(provider.shouldConnect).toBe(true);
  });
});
