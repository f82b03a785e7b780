/**
 * Nothing lost, nothing stale (decisions §13), against the local stack with stock y-websocket providers: a burst typed
 * just before a tab closes is stored whole and reaches the room, in the binary framing and through the adapter
 * (base64), while another client is in the room; a client that closes right after a caret move leaves no ghost caret
 * with the others, whether it closes gracefully or drops.
 */
import WebSocket from 'ws';
import { createLiveSocket } from '../../clients/live-socket.js';
import { newApiKeyHeaders, post } from '../support/http';
import { authorize, closeClients, connect, seedLiveDocument, type LiveClient, type LiveDoc } from '../support/live';
import { eventually, waitFor } from '../support/wait';

const textOf = async (doc: LiveDoc): Promise<string> => {
  const reply = await post(
    '/v2/crdt/get',
    { organizationId: doc.organizationId, documentId: doc.documentId, editorId: doc.editorId },
    doc.headers,
  );
  return reply.body.result.data[0].data as string;
};

const ROUNDS = 5;
const BURST = 64;

/** The characters of `expected` found in `text`, counted per distinct character (each burst has its own). */
function kept(text: string, bursts: readonly string[]): number {
  return bursts.reduce((sum, burst) => sum + [...text].filter((char) => char === burst[0]).length, 0);
}

afterEach(() => closeClients());

describe.each([
  { framing: 'binary', polyfill: undefined },
  { framing: 'base64 (the adapter)', polyfill: createLiveSocket(WebSocket as unknown as typeof globalThis.WebSocket) },
])('a burst typed just before the tab closes, $framing', ({ polyfill }) => {
  it(`is stored whole and reaches the other client, ${ROUNDS} rounds of ${BURST} keystrokes each followed at once by provider.destroy()`, async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const options = polyfill === undefined ? {} : { WebSocketPolyfill: polyfill };
    const bob = await connect(await authorize(doc, 'bob'), options);
    const bursts: string[] = [];

    for (let round = 0; round < ROUNDS; round += 1) {
      const ann: LiveClient = await connect(await authorize(doc, 'ann'), options);
      // One character per round, repeated: a keystroke each, so every keystroke is one update message.
      const char = String.fromCharCode(0x41 + round);
      const text = ann.doc.getText('content');
      for (let i = 0; i < BURST; i += 1) text.insert(text.length, char);
      ann.provider.awareness.setLocalStateField('cursor', { at: text.length });
      ann.provider.destroy();
      bursts.push(char.repeat(BURST));
    }

    const typed = ROUNDS * BURST;
    const atBob = await eventually(
      () => bob.text(),
      (text) => kept(text, bursts) === typed,
      { what: 'every burst to reach the other client', ceilingMs: 15000 },
    ).catch(() => bob.text());
    const stored = await eventually(
      () => textOf(doc),
      (text) => kept(text, bursts) === typed,
      { what: 'every burst to be stored', ceilingMs: 15000 },
    ).catch(() => textOf(doc));
    // What was measured, for the resolution: characters stored of characters typed.
    process.stdout.write(
      `burst-then-close: stored ${kept(stored, bursts)} of ${typed} typed characters, ${kept(atBob, bursts)} reached the other client\n`,
    );
    expect({ stored: kept(stored, bursts), relayed: kept(atBob, bursts) }).toEqual({ stored: typed, relayed: typed });
  });
});

/** The p-th percentile of some durations. */
const percentile = (values: readonly number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)];

describe.each([
  { how: 'drops abruptly (its socket cut, no close)', leave: (client: LiveClient) => cut(client) },
  { how: 'closes gracefully (provider.destroy())', leave: (client: LiveClient) => client.provider.destroy() },
])('a client that moves its caret and at once $how', ({ leave }) => {
  it('is removed from the presence of the other client of its room, 10 rooms at once, and never comes back', async () => {
    const headers = await newApiKeyHeaders();
    const pairs = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const doc = await seedLiveDocument(headers);
        const observer = await connect(await authorize(doc, 'bob'));
        // The observer's own 30-s timeouts (for quiet clients, and for a quiet connection, whose reconnect clears every
        // remote state) are stopped: only the service can remove a ghost here.
        clearInterval((observer.provider.awareness as unknown as { _checkInterval: NodeJS.Timeout })._checkInterval);
        clearInterval((observer.provider as unknown as { _checkInterval: NodeJS.Timeout })._checkInterval);
        const leaver = await connect(await authorize(doc, 'ann'));
        leaver.provider.awareness.setLocalStateField('cursor', { at: 1 });
        await waitFor(() => stateOf(observer, leaver)?.cursor?.at === 1, { what: 'the observer to see the caret' });
        return { observer, leaver };
      }),
    );

    const removals = await Promise.all(
      pairs.map(async ({ observer, leaver }) => {
        leaver.provider.awareness.setLocalStateField('cursor', { at: 2 });
        const started = Date.now();
        leave(leaver);
        await waitFor(() => stateOf(observer, leaver) === undefined, {
          what: "the closed client's caret to be removed",
        });
        return Date.now() - started;
      }),
    );
    // Echoes of the old state (the observer passes on what it learnt) must not bring it back.
    await new Promise((resolve) => setTimeout(resolve, 500));

    process.stdout.write(
      `presence removal after a close: p50 ${percentile(removals, 50)} ms, p95 ${percentile(removals, 95)} ms, max ${Math.max(...removals)} ms\n`,
    );
    expect(pairs.filter(({ observer, leaver }) => stateOf(observer, leaver) !== undefined)).toHaveLength(0);
  });
});

function stateOf(observer: LiveClient, other: LiveClient): { cursor?: { at: number } } | undefined {
  return observer.provider.awareness.getStates().get(other.doc.clientID) as { cursor?: { at: number } } | undefined;
}

/** Cuts a client's socket without a close handshake (a crashed tab or a lost network), and keeps it from reconnecting. */
function cut(client: LiveClient): void {
  client.provider.shouldConnect = false;
  (client.provider.ws as unknown as WebSocket).terminate();
}
