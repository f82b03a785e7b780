/**
 * Presence over the live-sync socket adapter (clients/live-socket.js) through minutes of a stock y-websocket
 * provider's life, on Jest's fake clock: the adapter sends the local client's unchanged presence once a minute instead
 * of every 15 s (issue 30, an idle room's cost), keeps the remote clients alive at the provider in between, and still
 * lets a dead connection close and a vanished client go.
 *
 * The socket under the adapter is in memory (no I/O, so the fake clock drives everything), and y-protocols reads the
 * time through a `Date.now` it captured when loaded: so the clock is faked before the Yjs modules are required.
 */
import type * as YType from 'yjs';
import type { WebsocketProvider as ProviderType } from 'y-websocket';
import { encodeFrames, parseFrame } from '../../shared/domain/live/framing';
import { awarenessEntries, awarenessMessage, type AwarenessTestEntry as Entry } from '../support/awareness-messages';
import { createLiveSocket, PRESENCE_RENEWAL_MS, REMOTE_PRESENCE_LIFETIME_MS } from '../../clients/live-socket.js';

jest.useFakeTimers({ now: Date.UTC(2026, 10, 27, 12), doNotFake: ['queueMicrotask', 'nextTick'] });
const Y = require('yjs') as typeof YType;
const { WebsocketProvider } = require('y-websocket') as { WebsocketProvider: typeof ProviderType };

/** One connection as the server end sees it: the frames the adapter sent, and a way to send it messages. */
class MemorySocket {
  static readonly opened: MemorySocket[] = [];
  readyState = 0;
  binaryType = 'blob';
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number; reason: string; wasClean: boolean }) => void) | null = null;
  onerror: (() => void) | null = null;
  /** Each message the adapter sent, with the fake time it went. */
  readonly sent: Array<{ at: number; message: Uint8Array }> = [];
  private nextId = 0;

  constructor(readonly url: string) {
    MemorySocket.opened.push(this);
    setTimeout(() => {
      this.readyState = 1;
      this.onopen?.();
    }, 0);
  }

  send(frame: string): void {
    const parsed = parseFrame(frame);
    const messages = parsed.kind === 'whole' ? [parsed.message] : parsed.kind === 'batch' ? parsed.messages : [];
    for (const message of messages) this.sent.push({ at: Date.now(), message });
  }

  close(code = 1000): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    setTimeout(() => this.onclose?.({ code, reason: '', wasClean: true }), 0);
  }

  /** The server sends a protocol message. */
  deliver(message: Uint8Array): void {
    for (const frame of encodeFrames(message, String(this.nextId++))) this.onmessage?.({ data: frame });
  }

  /** The awareness entries the adapter sent, per message. */
  awarenessSent(): Array<{ at: number; entries: Entry[] }> {
    return this.sent.flatMap(({ at, message }) => {
      const entries = awarenessEntries(message);
      return entries === null ? [] : [{ at, entries }];
    });
  }
}

const providers: ProviderType[] = [];

/** A stock provider over the adapter over a memory socket, opened and with a presence of its own. */
async function openProvider(user = 'Ann') {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider('wss://live.example/prod', 'doc-1', doc, {
    WebSocketPolyfill: createLiveSocket(MemorySocket) as unknown as typeof WebSocket,
    disableBc: true,
    params: { token: 'tok' },
  });
  providers.push(provider);
  provider.awareness.setLocalStateField('user', user);
  await jest.advanceTimersByTimeAsync(1);
  const socket = MemorySocket.opened[MemorySocket.opened.length - 1];
  expect(provider.wsconnected).toBe(true);
  return { doc, provider, socket };
}

/** Moves the fake clock on by `ms`, in the provider's own 3-s steps, calling `check` after each. */
async function live(ms: number, check: (elapsed: number) => void = () => {}): Promise<void> {
  for (let elapsed = 3_000; elapsed <= ms; elapsed += 3_000) {
    await jest.advanceTimersByTimeAsync(3_000);
    check(elapsed);
  }
}

const REMOTE = 4_000_000_001;

beforeEach(() => {
  MemorySocket.opened.length = 0;
});

afterEach(() => {
  for (const provider of providers.splice(0)) {
    provider.destroy();
    provider.doc.destroy();
  }
});

afterAll(() => jest.useRealTimers());

describe('presence renewals over the live socket', () => {
  it("sends the local client's unchanged presence once a minute, not at each of the provider's 15-s renewals", async () => {
    const { doc, socket } = await openProvider();
    let clock = 0;

    // Another client in the room renews once a minute too, so the connection is heard.
    await live(10 * 60_000, (elapsed) => {
      if (elapsed % PRESENCE_RENEWAL_MS === 0)
        socket.deliver(awarenessMessage([{ clientId: REMOTE, clock: (clock += 4), state: { user: 'Zed' } }]));
    });

    const own = socket
      .awarenessSent()
      .filter(({ entries }) => entries.some((entry) => entry.clientId === doc.clientID));
    // The announcement on open, then one renewal a minute (the provider's renewal that falls due after 60 s): 10
    // minutes at 15 s would be 40 renewals.
    expect(own.length).toBeGreaterThanOrEqual(10);
    expect(own.length).toBeLessThanOrEqual(11);
    const gaps = own.slice(1).map((renewal, i) => renewal.at - own[i].at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(PRESENCE_RENEWAL_MS);
    expect(Math.max(...gaps)).toBeLessThan(PRESENCE_RENEWAL_MS + 15_000);
  });

  it('sends a change of presence at once, however soon after the last', async () => {
    const { provider, socket } = await openProvider();
    await live(6_000);

    provider.awareness.setLocalStateField('cursor', 4);
    await jest.advanceTimersByTimeAsync(1);
    provider.awareness.setLocalStateField('cursor', 5);
    await jest.advanceTimersByTimeAsync(1);

    const cursors = socket.awarenessSent().map(({ entries }) => (entries[0].state as { cursor?: number }).cursor);
    expect(cursors).toEqual([undefined, 4, 5]);
  });

  it("keeps a remote client's presence at the provider while its renewals come once a minute", async () => {
    const { provider, socket } = await openProvider();
    let clock = 1;
    socket.deliver(awarenessMessage([{ clientId: REMOTE, clock, state: { user: 'Zed' } }]));
    await jest.advanceTimersByTimeAsync(1);
    const seenAt: boolean[] = [];

    await live(10 * 60_000, (elapsed) => {
      if (elapsed % PRESENCE_RENEWAL_MS === 0) {
        clock += 4; // the remote provider's clock moved at each of its renewals, one of four went out
        socket.deliver(awarenessMessage([{ clientId: REMOTE, clock, state: { user: 'Zed' } }]));
      }
      seenAt.push(provider.awareness.getStates().get(REMOTE)?.user === 'Zed');
    });

    // Stock, the provider drops a client it heard nothing new from for 30 s: here it is there at every step.
    expect(seenAt.filter((seen) => !seen)).toHaveLength(0);
    expect(provider.wsconnected).toBe(true);
    expect(MemorySocket.opened).toHaveLength(1);
  });

  it('drops a remote client that went silent without a goodbye within its lifetime and 30 s', async () => {
    const { provider, socket } = await openProvider();
    socket.deliver(awarenessMessage([{ clientId: REMOTE, clock: 1, state: { user: 'Zed' } }]));
    // The room goes on: another client's renewals keep the connection heard.
    let other = 1;
    let goneAfter = 0;

    await live(REMOTE_PRESENCE_LIFETIME_MS + 60_000, (elapsed) => {
      if (elapsed % 30_000 === 0)
        socket.deliver(awarenessMessage([{ clientId: REMOTE + 1, clock: (other += 1), state: { user: 'Yan' } }]));
      if (goneAfter === 0 && !provider.awareness.getStates().has(REMOTE)) goneAfter = elapsed;
    });

    expect(goneAfter).toBeGreaterThanOrEqual(REMOTE_PRESENCE_LIFETIME_MS);
    expect(goneAfter).toBeLessThanOrEqual(REMOTE_PRESENCE_LIFETIME_MS + 30_000 + 6_000);
    expect(provider.awareness.getStates().get(REMOTE + 1)).toEqual({ user: 'Yan' });
  });

  it("applies a remote client's removal at once, and drops an entry at a clock it already had", async () => {
    const { provider, socket } = await openProvider();
    socket.deliver(awarenessMessage([{ clientId: REMOTE, clock: 5, state: { user: 'Zed', cursor: 2 } }]));
    await live(30_000); // renewals handed to the provider in between

    // Late and older than what came: a stock provider ignores it, and so does the adapter.
    socket.deliver(awarenessMessage([{ clientId: REMOTE, clock: 4, state: { user: 'Zed', cursor: 1 } }]));
    expect(provider.awareness.getStates().get(REMOTE)).toEqual({ user: 'Zed', cursor: 2 });

    socket.deliver(awarenessMessage([{ clientId: REMOTE, clock: 6, state: null }]));
    expect(provider.awareness.getStates().has(REMOTE)).toBe(false);
    await live(60_000);
    expect(provider.awareness.getStates().has(REMOTE)).toBe(false);
  });

  it('stays connected when alone, its own presence echoed once a minute', async () => {
    const { doc, provider, socket } = await openProvider();
    const echo = () => {
      const own = socket.awarenessSent().at(-1);
      if (own && own.entries[0].clientId === doc.clientID) socket.deliver(awarenessMessage(own.entries));
    };
    let echoed = 0;

    await live(10 * 60_000, () => {
      const count = socket.awarenessSent().length;
      if (count > echoed) {
        echoed = count;
        echo();
      }
    });

    expect(provider.wsconnected).toBe(true);
    expect(MemorySocket.opened).toHaveLength(1);
  });

  it('closes and reconnects a connection the server went silent on, as the stock provider does', async () => {
    const { provider } = await openProvider();

    await live(REMOTE_PRESENCE_LIFETIME_MS + 45_000);

    // Nothing came for the lifetime: the adapter stopped handing keep-alives, and the provider's 30-s timeout closed.
    expect(MemorySocket.opened.length).toBeGreaterThanOrEqual(2);
    expect(provider.shouldConnect).toBe(true);
  });

  it("shows the room's presence at once after a reconnect, even at the clock the provider already had", async () => {
    const { provider, socket } = await openProvider();
    socket.deliver(awarenessMessage([{ clientId: REMOTE, clock: 7, state: { user: 'Zed' } }]));
    expect(provider.awareness.getStates().get(REMOTE)).toEqual({ user: 'Zed' });

    socket.close();
    await jest.advanceTimersByTimeAsync(5_000);
    const again = MemorySocket.opened[1];
    expect(again).toBeDefined();
    expect(provider.awareness.getStates().has(REMOTE)).toBe(false); // the provider dropped it on the close

    // The room's presence on the new connection is at the clock the remote client still has.
    again.deliver(awarenessMessage([{ clientId: REMOTE, clock: 7, state: { user: 'Zed' } }]));

    expect(provider.awareness.getStates().get(REMOTE)).toEqual({ user: 'Zed' });
  });

  it('answers a presence query with the local state, unchanged or not', async () => {
    const { doc, socket } = await openProvider();
    await live(3_000);

    socket.deliver(new Uint8Array([3]));
    await jest.advanceTimersByTimeAsync(1);

    const sent = socket.awarenessSent();
    expect(sent).toHaveLength(2);
    expect(sent[1].entries.map((entry) => entry.clientId)).toEqual([doc.clientID]);
  });

  it('announces the local state again after the server removed the local client, unchanged or not', async () => {
    const { doc, provider, socket } = await openProvider();
    await live(3_000);
    const clock = provider.awareness.meta.get(doc.clientID)?.clock ?? 0;

    socket.deliver(awarenessMessage([{ clientId: doc.clientID, clock, state: null }]));
    await jest.advanceTimersByTimeAsync(1);

    const sent = socket.awarenessSent();
    expect(sent).toHaveLength(2);
    expect(sent[1].entries).toEqual([{ clientId: doc.clientID, clock: clock + 1, state: { user: 'Ann' } }]);
  });
});
