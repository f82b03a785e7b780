/**
 * Live sync against the local stack (decisions §13), with the stock `WebsocketProvider` of `y-websocket` over `ws`:
 * convergence, REST ↔ live, viewers, tokens, access while connected, presence, malformed and oversized frames, the
 * room limit and tenancy; and through the repository's adapter (clients/live-socket.js), large updates and documents
 * in chunks under API Gateway's frame limits, which the local stack applies to base64 connections, and what the
 * provider sends in one tick in one batch frame.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { createLiveSocket } from '../../clients/live-socket.js';
import { parseFrame } from '../../shared/domain/live/framing';
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';
import {
  authorize,
  closeClients,
  connect,
  EMPTY_SYNC_STEP_1,
  rawSocket,
  seedLiveDocument,
  sessionUrl,
  type LiveDoc,
  type RawSocket,
} from '../support/live';
import { eventually, waitFor } from '../support/wait';

const textOf = async (doc: LiveDoc): Promise<string> => {
  const reply = await post(
    '/v2/crdt/get',
    { organizationId: doc.organizationId, documentId: doc.documentId, editorId: doc.editorId },
    doc.headers,
  );
  return reply.body.result.data[0].data as string;
};

afterEach(() => closeClients());

describe('live sync with the stock y-websocket provider', () => {
  it('converges when three editors type at the same time, and REST reads what they typed', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const writers = await Promise.all(
      ['ann', 'bob', 'ann'].map(async (userId) => connect(await authorize(doc, userId))),
    );

    for (let round = 0; round < 10; round += 1) {
      writers.forEach((writer, index) => {
        const text = writer.doc.getText('content');
        // At either end, chosen at random: a word is never split, so the words can be counted at the end.
        if (Math.random() < 0.5) text.insert(0, `${index}${round} `);
        else text.insert(text.length, `${index}${round} `);
      });
      await new Promise((resolve) => setImmediate(resolve));
    }

    await waitFor(() => writers.every((writer) => writer.text().length === 90 && writer.text() === writers[0].text()), {
      what: 'the three editors to converge',
    });
    const final = writers[0].text();
    expect(final.split(' ').filter(Boolean).sort()).toEqual(
      [0, 1, 2].flatMap((index) => Array.from({ length: 10 }, (_, round) => `${index}${round}`)).sort(),
    );
    expect(
      await eventually(
        () => textOf(doc),
        (stored) => stored === final,
        { what: 'REST to read the live edits' },
      ),
    ).toBe(final);
  });

  it('sends a REST update to open editors, and a new client gets the live edits on its first sync', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const ann = await connect(await authorize(doc, 'ann'));
    ann.doc.getText('content').insert(0, 'typed live');
    // A replacement is computed against what is stored: it replaces the live edit only once that is stored.
    await eventually(
      () => textOf(doc),
      (text) => text === 'typed live',
      { what: 'the live edit to be stored' },
    );

    const rest = await post(
      '/v2/crdt/update',
      {
        organizationId: doc.organizationId,
        documentId: doc.documentId,
        editorId: doc.editorId,
        type: 'text',
        data: 'set by REST',
      },
      doc.headers,
    );
    const bob = await connect(await authorize(doc, 'bob'));

    expect(rest.status).toBe(200);
    await waitFor(() => ann.text() === 'set by REST', { what: 'the REST update to reach the open editor' });
    await waitFor(() => bob.text() === 'set by REST', { what: 'the new client to sync' });
  });

  it('sends a document over 128 KB to a stock provider without the adapter (binary frames, local stack only)', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const large = randomBytes(150 * 1024).toString('base64');
    await post(
      '/v2/crdt/update',
      {
        organizationId: doc.organizationId,
        documentId: doc.documentId,
        editorId: doc.editorId,
        type: 'text',
        data: large,
      },
      doc.headers,
    );

    const bob = await connect(await authorize(doc, 'bob'));

    expect(bob.text()).toBe(large);
  });

  it('relays to a viewer but drops its changes, and relays its presence', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const viewerSession = await authorize(doc, 'vic');
    const ann = await connect(await authorize(doc, 'ann'));
    const vic = await connect(viewerSession);

    vic.doc.getText('content').insert(0, 'viewer wrote this ');
    vic.provider.awareness.setLocalStateField('user', { name: 'Vic' });
    ann.doc.getText('content').insert(0, 'editor wrote this');

    expect(viewerSession.accessRole).toBe('viewer');
    await waitFor(() => vic.text().includes('editor wrote this'), { what: 'the viewer to receive the edit' });
    await waitFor(() => [...ann.provider.awareness.getStates().values()].some((state) => state.user?.name === 'Vic'), {
      what: "the viewer's presence",
    });
    // The viewer's own insert stays local: the stored document and the editor never see it.
    expect(await textOf(doc)).toBe('editor wrote this');
    expect(ann.text()).toBe('editor wrote this');
  });

  it('removes the presence of a client whose connection drops without a goodbye', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const ann = await connect(await authorize(doc, 'ann'));
    const bob = await connect(await authorize(doc, 'bob'));
    bob.provider.awareness.setLocalStateField('user', { name: 'Bob' });
    await waitFor(() => ann.provider.awareness.getStates().has(bob.doc.clientID), { what: "Bob's presence at Ann's" });
    const removedByServer: number[] = [];
    ann.provider.awareness.on('update', ({ removed }: { removed: number[] }, origin: unknown) => {
      if (origin !== 'timeout') removedByServer.push(...removed);
    });

    // No goodbye: the provider stops reconnecting and its socket is cut.
    bob.provider.shouldConnect = false;
    (bob.provider.ws as unknown as { terminate(): void }).terminate();

    await waitFor(() => removedByServer.includes(bob.doc.clientID), { what: "the server to remove Bob's presence" });
    expect(ann.provider.awareness.getStates().has(bob.doc.clientID)).toBe(false);
  });
});

describe('live sync tokens and access', () => {
  it('refuses a tampered token, a missing one and a URL that names another room, before sending any editor data', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const session = await authorize(doc, 'ann');
    const [body, signature] = session.token.split('.');
    const tampered = `${Buffer.from(Buffer.from(body, 'base64url').toString('utf8').replace('"ann"', '"bob"')).toString('base64url')}.${signature}`;
    const otherRoom = (await authorize({ ...doc, editorId: uniqueId('other') }, 'ann', { type: 'text' })).room;

    const sockets = [
      rawSocket(sessionUrl(session, tampered)),
      rawSocket(`${session.serverUrl}/${session.room}`),
      rawSocket(sessionUrl(session, session.token, otherRoom)),
    ];
    for (const socket of sockets) {
      await socket.opened;
      socket.socket.send(EMPTY_SYNC_STEP_1);
    }

    for (const socket of sockets)
      await waitFor(() => socket.closed !== undefined, { what: 'the refused socket to close' });
    expect(sockets.map((socket) => socket.messages.map((message) => message.reason))).toEqual([
      ['Invalid session token.'],
      ['A session token is required (the `token` parameter).'],
      ['The session token is for another room.'],
    ]);
  });

  it("serves each API key its own editor: another tenant's token for the same ids never reaches the first one's data", async () => {
    const first = await seedLiveDocument(await newApiKeyHeaders());
    const secondHeaders = await newApiKeyHeaders();
    await post(
      '/v2/users/add',
      {
        organizationId: first.organizationId,
        createOrganization: true,
        users: [{ userId: 'ann', name: 'Ann', email: 'ann@example.com', accessRole: 'editor' }],
      },
      secondHeaders,
    );
    await post(
      '/v2/organizations/documents/add',
      { organizationId: first.organizationId, documents: [{ documentId: first.documentId, documentName: 'Other' }] },
      secondHeaders,
    );
    const second = { ...first, headers: secondHeaders };
    const firstClient = await connect(await authorize(first, 'ann'));
    firstClient.doc.getText('content').insert(0, 'first tenant secret');
    await eventually(
      () => textOf(first),
      (text) => text === 'first tenant secret',
      { what: 'the first edit to be stored' },
    );

    const secondClient = await connect(await authorize(second, 'ann', { type: 'text' }));
    secondClient.doc.getText('content').insert(0, 'second tenant');

    await eventually(
      () => textOf(second),
      (text) => text === 'second tenant',
      { what: 'the second edit to be stored' },
    );
    expect(secondClient.text()).toBe('second tenant');
    expect(firstClient.text()).toBe('first tenant secret');
    expect(await textOf(first)).toBe('first tenant secret');
  });

  it('closes a connection whose user is removed, or whose document is disabled, and makes a demoted editor read-only', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const disabledDoc = await seedLiveDocument(doc.headers);
    // Ann connects first: once a later connection has been checked again, so is Ann's next message (see below).
    const demoted = await connect(await authorize(doc, 'ann'));
    const watcher = await connect(await authorize(doc, 'vic'));
    const removed = rawSocket(sessionUrl(await authorize(doc, 'bob')));
    const onDisabled = rawSocket(sessionUrl(await authorize(disabledDoc, 'ann')));
    for (const socket of [removed, onDisabled]) {
      await socket.opened;
      socket.socket.send(EMPTY_SYNC_STEP_1);
    }
    await waitFor(() => removed.messages.length > 0 && onDisabled.messages.length > 0, {
      what: 'both sockets to sync',
    });

    await post('/v2/users/delete', { organizationId: doc.organizationId, userIds: ['bob'] }, doc.headers);
    await post(
      '/v2/organizations/documents/access/disablestate/update',
      { organizationId: disabledDoc.organizationId, documentIds: [disabledDoc.documentId], disabled: true },
      doc.headers,
    );
    await post(
      '/v2/users/update',
      { organizationId: doc.organizationId, users: [{ userId: 'ann', accessRole: 'viewer' }] },
      doc.headers,
    );
    // A connection's message checks its access again once the last check is over a second old (the e2e stack's
    // setting): the sockets keep saying something until the service has checked them and closed them.
    await waitFor(
      () => {
        for (const socket of [removed, onDisabled])
          if (socket.closed === undefined) socket.socket.send(EMPTY_SYNC_STEP_1);
        return removed.closed !== undefined && onDisabled.closed !== undefined;
      },
      { what: 'the service to check both sockets again and close them', intervalMs: 200 },
    );
    // Ann's last check is older than theirs, so her next message is checked too; the watcher seeing it means it was.
    demoted.provider.awareness.setLocalStateField('user', { name: 'Ann' });
    await waitFor(
      () => [...watcher.provider.awareness.getStates().values()].some((state) => state.user?.name === 'Ann'),
      { what: "Ann's presence after the check" },
    );
    demoted.doc.getText('content').insert(0, 'after demotion');

    for (const socket of [removed, onDisabled])
      await waitFor(() => socket.closed !== undefined, { what: 'the connection to close' });
    expect(removed.messages.at(-1)?.reason).toBe('User has no access to this document.');
    expect(onDisabled.messages.at(-1)?.reason).toBe('User has no access to this document.');
    // Nothing Ann typed as a viewer is stored or relayed.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await textOf(doc)).toBe('');
    expect(watcher.text()).toBe('');
  });
});

describe('live sync limits', () => {
  it('closes only the connection that sends a frame that is not a protocol message', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const ann = await connect(await authorize(doc, 'ann'));
    const bob = await connect(await authorize(doc, 'bob'));
    const bad = rawSocket(sessionUrl(await authorize(doc, 'bob')));
    await bad.opened;

    bad.socket.send(new Uint8Array([9, 9, 9]));
    await waitFor(() => bad.closed !== undefined, { what: 'the bad socket to close' });
    ann.doc.getText('content').insert(0, 'still served');

    await waitFor(() => bob.text() === 'still served', { what: 'the others to be served' });
    expect(bad.messages.at(-1)?.reason).toMatch(/^Not a y-websocket protocol message/);
  });

  it('closes a binary connection that sends a message over 1 MiB, and a base64 one that sends a frame over 32 KB', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const session = await authorize(doc, 'ann');
    const binary = rawSocket(sessionUrl(session));
    const text = rawSocket(`${sessionUrl(session)}&encoding=base64`);
    const binaryFrame = rawSocket(`${sessionUrl(session)}&encoding=base64`);
    await Promise.all([binary.opened, text.opened, binaryFrame.opened]);

    binary.socket.send(new Uint8Array(1024 * 1024 + 1));
    text.socket.send('A'.repeat(32 * 1024 + 4));
    binaryFrame.socket.send(EMPTY_SYNC_STEP_1);

    for (const socket of [binary, text, binaryFrame])
      await waitFor(() => socket.closed !== undefined, { what: 'the socket to close' });
    expect([binary.closed?.code, text.closed?.code, binaryFrame.closed?.code]).toEqual([1009, 1009, 1003]);
  });

  it('refuses the 101st connection of an editor with "Room is full."', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const session = await authorize(doc, 'ann');
    const room: RawSocket[] = [];
    for (let i = 0; i < 100; i += 1) room.push(rawSocket(sessionUrl(session)));
    await Promise.all(room.map((socket) => socket.opened));

    const extra = rawSocket(sessionUrl(session));
    await extra.opened;
    extra.socket.send(EMPTY_SYNC_STEP_1);
    room[0].socket.send(EMPTY_SYNC_STEP_1);

    await waitFor(() => extra.closed !== undefined, { what: 'the 101st to be refused' });
    await waitFor(() => room[0].messages.length >= 2, { what: 'a member to be served' });
    expect(extra.messages.map((message) => message.reason)).toEqual(['Room is full.']);
    expect(room[0].messages[0].type).toBe(0);
    for (const socket of room) socket.socket.close();
  });
});

describe('live sync through the adapter, under API Gateway limits (encoding=base64)', () => {
  it('carries a 300 KB update both ways and a 2 MB document to a new client, in chunks of at most 32 KB', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const polyfill = createLiveSocket(WebSocket as unknown as typeof globalThis.WebSocket);
    const ann = await connect(await authorize(doc, 'ann'), { WebSocketPolyfill: polyfill });
    const bob = await connect(await authorize(doc, 'bob'), { WebSocketPolyfill: polyfill });
    // Incompressible text: its update is as large as the text (base64 of random bytes).
    const large = randomBytes(225 * 1024).toString('base64');

    ann.doc.getText('content').insert(0, large);
    await waitFor(() => bob.text() === large, { what: 'the 300 KB update to reach the other client' });
    bob.doc.getText('content').insert(bob.text().length, ' and back');
    await waitFor(() => ann.text() === `${large} and back`, { what: 'the reply to come back' });
    // Grow the stored document to about 2 MB, then open a new client on it: its first sync is chunked.
    for (let i = 0; i < 6; i += 1) ann.doc.getText('content').insert(0, randomBytes(225 * 1024).toString('base64'));
    const expected = ann.text();
    await eventually(
      () => textOf(doc),
      (stored) => stored === expected,
      { what: 'the 2 MB document to be stored' },
    );
    const late = await connect(await authorize(doc, 'bob'), { WebSocketPolyfill: polyfill });

    expect(Buffer.byteLength(expected)).toBeGreaterThan(2_000_000);
    expect(late.text()).toBe(expected);
  });

  it('sends an edit and its caret move, made in one tick, as one frame, and the service stores and relays both', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const frames: string[] = [];
    class Recording extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols);
        const send = this.send.bind(this) as (...args: unknown[]) => void;
        this.send = ((data: unknown, ...rest: unknown[]) => {
          frames.push(String(data));
          send(data, ...rest);
        }) as typeof this.send;
      }
    }
    const ann = await connect(await authorize(doc, 'ann'), {
      WebSocketPolyfill: createLiveSocket(Recording as unknown as typeof globalThis.WebSocket),
    });
    const bob = await connect(await authorize(doc, 'bob'), {
      WebSocketPolyfill: createLiveSocket(WebSocket as unknown as typeof globalThis.WebSocket),
    });
    const sentBefore = frames.length;

    ann.doc.getText('content').insert(0, 'one frame');
    ann.provider.awareness.setLocalStateField('cursor', 9);

    await waitFor(
      () => bob.text() === 'one frame' && bob.provider.awareness.getStates().get(ann.doc.clientID)?.cursor === 9,
      { what: 'the edit and the caret at the other client' },
    );
    // The first frame after the act (a presence renewal, every 15 s, may follow it on a slow run).
    const batch = parseFrame(frames[sentBefore]);
    expect(batch.kind === 'batch' ? batch.messages.map((message) => message[0]) : batch.kind).toEqual([0, 1]);
    expect(
      await eventually(
        () => textOf(doc),
        (stored) => stored === 'one frame',
        { what: 'the edit to be stored' },
      ),
    ).toBe('one frame');
  });

  it('reports a message over 1 MiB as close code 1009 (message too big), after the service says why', async () => {
    const doc = await seedLiveDocument(await newApiKeyHeaders());
    const session = await authorize(doc, 'ann');
    const LiveSocket = createLiveSocket(WebSocket as unknown as typeof globalThis.WebSocket);
    const socket = new LiveSocket(sessionUrl(session));
    socket.binaryType = 'arraybuffer';
    const closes: number[] = [];
    socket.onclose = (event: { code: number }) => closes.push(event.code);
    await new Promise<void>((resolve) => {
      socket.onopen = () => resolve();
    });

    socket.send(new Uint8Array(1024 * 1024 + 1));

    await waitFor(() => closes.length === 1, { what: 'the socket to close' });
    expect(closes).toEqual([1009]);
  });
});
