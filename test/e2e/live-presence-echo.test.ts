/**
 * Presence echoes stopped at the client (issue 30 item 2), against the local stack with stock y-websocket providers
 * over the adapter (clients/live-socket.js): the stock provider passes on every remote presence change it receives,
 * and the adapter sends only its own client's. Counted at the source: the `ws` WebSocket under the adapter records
 * each text frame it sends, and the local gateway hands each frame to `$default`, one message in (and one function
 * run) each, as API Gateway bills it.
 */
import * as decoding from 'lib0/decoding';
import WebSocket from 'ws';
import { createLiveSocket } from '../../clients/live-socket.js';
import { parseFrame } from '../../shared/domain/live/framing';
import { newApiKeyHeaders } from '../support/http';
import { authorize, closeClients, connect, seedLiveDocument, type LiveClient } from '../support/live';
import { waitFor } from '../support/wait';

/** One socket under the adapter: the text frames it sent, in order. */
interface CountedSocket {
  frames: string[];
}

/** The adapter over a `ws` WebSocket that records the frames each socket sends. */
function countingAdapter() {
  const sockets: CountedSocket[] = [];
  class CountingWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols);
      const counted: CountedSocket = { frames: [] };
      sockets.push(counted);
      const send = this.send.bind(this) as (...args: unknown[]) => void;
      this.send = ((data: unknown, ...rest: unknown[]) => {
        counted.frames.push(String(data));
        send(data, ...rest);
      }) as typeof this.send;
    }
  }
  return { polyfill: createLiveSocket(CountingWebSocket as unknown as typeof globalThis.WebSocket), sockets };
}

/** The awareness entries a frame carries, of every awareness message in it (none for a chunk). */
function awarenessIn(frame: string): Array<{ clientId: number; clock: number; state: unknown }> {
  const parsed = parseFrame(frame);
  const messages = parsed.kind === 'whole' ? [parsed.message] : parsed.kind === 'batch' ? parsed.messages : [];
  return messages.flatMap((message) => {
    const decoder = decoding.createDecoder(message);
    if (decoding.readVarUint(decoder) !== 1) return [];
    const update = decoding.createDecoder(decoding.readVarUint8Array(decoder));
    return Array.from({ length: decoding.readVarUint(update) }, () => ({
      clientId: decoding.readVarUint(update),
      clock: decoding.readVarUint(update),
      state: JSON.parse(decoding.readVarString(update)) as unknown,
    }));
  });
}

/** Per socket, how many of its frames carry an entry of `clientId` (at `clock` when given). */
function framesCarrying(sockets: readonly CountedSocket[], clientId: number, clock?: number): number[] {
  return sockets.map(
    ({ frames }) =>
      frames.filter((frame) =>
        awarenessIn(frame).some(
          (entry) => entry.clientId === clientId && (clock === undefined || entry.clock === clock),
        ),
      ).length,
  );
}

const sum = (counts: readonly number[]) => counts.reduce((total, count) => total + count, 0);

/** Whether `client` holds every other client's presence with the user name it set. */
const seesAll = (client: LiveClient, all: readonly LiveClient[]) =>
  all.every(
    (other) =>
      other === client || typeof client.provider.awareness.getStates().get(other.doc.clientID)?.user === 'string',
  );

afterEach(() => closeClients());

describe("presence through the adapter: only each client's own goes out", () => {
  it('costs one message in for a caret move in a room of 5, and every other client sees the caret and the removal on close', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const { polyfill, sockets } = countingAdapter();
    const clients: LiveClient[] = [];
    for (const userId of ['ann', 'bob', 'ann', 'bob', 'ann'])
      clients.push(await connect(await authorize(doc, userId), { WebSocketPolyfill: polyfill }));
    clients.forEach((client, index) => client.provider.awareness.setLocalStateField('user', `user ${index}`));
    await waitFor(() => clients.every((client) => seesAll(client, clients)), {
      what: 'every client to see the four others',
    });
    const [mover, ...others] = clients;
    const moverId = mover.doc.clientID;

    mover.provider.awareness.setLocalStateField('cursor', { anchor: 42, head: 42 });
    const clock = mover.provider.awareness.meta.get(moverId)?.clock;
    // A provider passes a remote change on from within the handler that applies it: once the others show the
    // caret, every frame its arrival caused has been sent.
    await waitFor(
      () => others.every((other) => other.provider.awareness.getStates().get(moverId)?.cursor?.anchor === 42),
      { what: 'the others to see the caret' },
    );

    const perConnection = framesCarrying(sockets, moverId, clock);
    expect({ framesInForTheMove: sum(perConnection), perConnection }).toEqual({
      framesInForTheMove: 1,
      perConnection: sockets.map((_, index) => (index === 0 ? 1 : 0)),
    });

    mover.provider.destroy();

    await waitFor(() => others.every((other) => !other.provider.awareness.getStates().has(moverId)), {
      what: 'the others to drop the closed client',
    });
    // Its goodbye went out from its own socket; no other socket ever passed on anything of it.
    expect(awarenessIn(sockets[0].frames[sockets[0].frames.length - 1])).toEqual([
      { clientId: moverId, clock: expect.any(Number), state: null },
    ]);
    expect(framesCarrying(sockets.slice(1), moverId)).toEqual([0, 0, 0, 0]);
  });

  it('shows presence both ways after a reconnect, and the reconnected socket still sends only its own', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const { polyfill, sockets } = countingAdapter();
    const ann = await connect(await authorize(doc, 'ann'), { WebSocketPolyfill: polyfill });
    const bob = await connect(await authorize(doc, 'bob'), { WebSocketPolyfill: polyfill });
    ann.provider.awareness.setLocalStateField('user', 'Ann');
    bob.provider.awareness.setLocalStateField('user', 'Bob');
    await waitFor(() => seesAll(ann, [ann, bob]) && seesAll(bob, [ann, bob]), { what: 'each to see the other' });

    // The connection drops (not a goodbye): the provider reconnects on a new socket.
    (ann.provider.ws as unknown as { close(): void }).close();
    await waitFor(() => sockets.length === 3 && ann.provider.wsconnected && ann.provider.synced, {
      what: 'the reconnect',
    });
    await waitFor(() => seesAll(bob, [ann, bob]), { what: 'Bob to see Ann again' });
    // Ann sees Bob again from his next change: on the close her provider dropped his state but kept its clock, so the
    // room's presence sent on connect (at that clock) is not news to it (stock y-protocols; Bob renews every 15 s).
    ann.provider.awareness.setLocalStateField('cursor', 5);
    bob.provider.awareness.setLocalStateField('cursor', 9);

    await waitFor(() => bob.provider.awareness.getStates().get(ann.doc.clientID)?.cursor === 5, {
      what: "Ann's caret at Bob's",
    });
    await waitFor(() => ann.provider.awareness.getStates().get(bob.doc.clientID)?.cursor === 9, {
      what: "Bob's caret at Ann's",
    });
    const reconnected = sockets[2];
    expect(framesCarrying([reconnected], bob.doc.clientID)).toEqual([0]);
    expect(framesCarrying([reconnected], ann.doc.clientID)[0]).toBeGreaterThanOrEqual(1);
    expect(framesCarrying([sockets[1]], ann.doc.clientID)).toEqual([0]);
  });
});
