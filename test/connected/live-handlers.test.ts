/**
 * The live WebSocket handlers as API Gateway drives them (decisions §13), which the local gateway does not: every
 * frame is its own invocation and may run beside the others (chunks of one message arrive out of order, at the same
 * time), a recipient that is gone answers GoneException, and the Management API is IAM-guarded. The handlers run
 * through their exports under their routes' grants against DynamoDB Local; the Management API is the SDK client with
 * a recording request handler in place of the network.
 *
 * @table-stream
 */
import * as decoding from 'lib0/decoding';
import * as Y from 'yjs';
import { handler as addUsers } from '../../functions/users/add';
import { handler as addDocuments } from '../../functions/documents/add';
import { handler as authorizeHandler } from '../../functions/crdt/live-authorize';
import { AccessDeniedException, runAsRoute, runAsSocketRoute, takeViolations } from '../../local/grant-check';
import { sendFrame } from '../../shared/adapters/live/management-api';
import { getEditor } from '../../shared/db/crdt';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { handler as deleteUsers } from '../../functions/users/delete';
import { config } from '../../shared/core/config';
import { TABLE_NAME, db } from '../../shared/db/client';
import { getConnection, memberKeyOf, roomMembers } from '../../shared/db/live-connection';
import { withFault } from '../support/faults';
import { bytesTo, callSocket, deleted, failing, gone, posted } from '../support/live-harness';
import { onMessage } from '../../shared/domain/live/socket-events';
import { FRAME_BURST } from '../../shared/domain/live/frame-budget';
import { encodeBatch, encodeFrames } from '../../shared/domain/live/framing';
import { awarenessMessage, readMessage, updateMessage } from '../../shared/domain/live/protocol';
import { socketRoutes } from '../../shared/routes';
import { handler as updateWebhookConfig } from '../../functions/workspace/advancedwebhookconfig-update';
import { handler as createEndpoint } from '../../functions/workspace/advancedwebhook-endpoints-create';
import { newTenant } from '../support/fixtures';
import { startPipeline, startReceiver } from '../support/webhook-pipeline';
import { uniqueId } from '../support/ids';
import { invoke } from '../support/invoke';
import { waitFor } from '../support/wait';

/** A connection's room entry (open, or a tombstone once closed), if it has one. */
async function entryOf(
  apiKeyId: string,
  ids: { organizationId: string; documentId: string; editorId: string },
  connectionId: string,
) {
  return (await roomMembers({ apiKeyId, ...ids })).find((member) => member.connectionId === connectionId);
}

/** The reason of an auth message (permission denied), or undefined for another message. */
function reasonOf(message: Uint8Array): string | undefined {
  const decoder = decoding.createDecoder(message);
  if (decoding.readVarUint(decoder) !== 2) return undefined;
  decoding.readVarUint(decoder);
  return decoding.readVarString(decoder);
}

async function openRoom() {
  const tenant = await newTenant();
  const ids = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
  await invoke(
    addUsers,
    '/v2/users/add',
    {
      organizationId: ids.organizationId,
      createOrganization: true,
      users: [
        { userId: 'ann', name: 'Ann', accessRole: 'editor' },
        { userId: 'bob', name: 'Bob', accessRole: 'editor' },
      ],
    },
    { headers: tenant.apiKeyHeaders },
  );
  await invoke(
    addDocuments,
    '/v2/organizations/documents/add',
    { organizationId: ids.organizationId, documents: [{ documentId: ids.documentId, documentName: 'Live' }] },
    { headers: tenant.apiKeyHeaders },
  );
  const session = async (userId: string) =>
    (
      await invoke(
        authorizeHandler,
        '/v2/crdt/live/authorize',
        { ...ids, userId, type: 'text' },
        { headers: tenant.apiKeyHeaders },
      )
    ).body.result?.data as { token: string; room: string };
  const open = async (userId: string, encoding = 'base64') => {
    const connectionId = uniqueId('conn');
    const { token } = await session(userId);
    const answer = await callSocket('$connect', connectionId, { query: { token, encoding } });
    expect(answer).toEqual({ statusCode: 200 });
    return connectionId;
  };
  return { tenant, ids, open };
}

describe('live handlers under API Gateway', () => {
  it('reassembles a chunked update whose frames run side by side in reverse order, stores it once and relays it once', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const source = new Y.Doc();
    source
      .getText('content')
      .insert(0, Buffer.from(Array.from({ length: 150_000 }, (_, i) => i % 251)).toString('base64'));
    const update = Y.encodeStateAsUpdate(source);
    const frames = encodeFrames(updateMessage(update), 'm1');

    const answers = await Promise.all(
      [...frames].reverse().map((frame) => callSocket('$default', ann, { body: frame })),
    );

    expect(frames.length).toBeGreaterThan(5);
    expect(answers.every((answer) => (answer as { statusCode: number }).statusCode === 200)).toBe(true);
    const relayed = bytesTo(bob)
      .map(readMessage)
      .filter((message) => message.kind === 'update');
    expect(relayed).toHaveLength(1);
    expect(Buffer.from((relayed[0] as { update: Uint8Array }).update).equals(Buffer.from(update))).toBe(true);
    expect(bytesTo(ann)).toEqual([]);
    const stored = await getEditor(tenant.apiKeyId, ids);
    expect(stored?.deltas).toHaveLength(1);
  });

  it('closes a recipient that is gone (GoneException) and never sends to it again', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    gone.add(bob);
    const edit = (text: string) => {
      const doc = new Y.Doc();
      doc.getText('content').insert(0, text);
      return encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), uniqueId('m').slice(-8))[0];
    };

    await callSocket('$default', ann, { body: edit('first') });
    const afterFirst = await entryOf(tenant.apiKeyId, ids, bob);
    gone.delete(bob);
    await callSocket('$default', ann, { body: edit('second') });

    expect(afterFirst).toMatchObject({ closedAt: expect.any(Number), revoked: false });
    expect(posted.get(bob)).toBeUndefined();
  });

  it('closes a connection that asks for a sync after a relay found it gone, so that its client reconnects rather than wait unsynced', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    // Bob has just joined: API Gateway has not opened his socket yet when Ann's edit is relayed to him.
    const bob = await open('bob');
    gone.add(bob);
    const doc = new Y.Doc();
    doc.getText('content').insert(0, 'typed');
    await callSocket('$default', ann, {
      body: encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), uniqueId('m').slice(-8))[0],
    });
    expect(await entryOf(tenant.apiKeyId, ids, bob)).toMatchObject({ closedAt: expect.any(Number) });
    // His socket opens, and his provider's first message asks for the document.
    gone.delete(bob);

    await callSocket('$default', bob, { body: encodeFrames(new Uint8Array([0, 0, 1, 0]), uniqueId('m').slice(-8))[0] });

    expect(posted.get(bob)).toBeUndefined();
    expect(deleted).toContain(bob);
  });

  it('answers $disconnect of a connection it never knew, and of one already closed, without failing', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');

    const first = await callSocket('$disconnect', ann);
    const again = await callSocket('$disconnect', ann);
    const unknown = await callSocket('$disconnect', uniqueId('conn'));

    expect([first, again, unknown]).toEqual([{ statusCode: 200 }, { statusCode: 200 }, { statusCode: 200 }]);
    expect(await entryOf(tenant.apiKeyId, ids, ann)).toMatchObject({ closedAt: expect.any(Number), revoked: false });
  });
});

describe('webhooks of live edits', () => {
  it('raises crdt.update_data for a live edit, with the edited content and its author', async () => {
    const pipeline = await startPipeline();
    const hook = await startReceiver();
    try {
      const { tenant, open } = await openRoom();
      const headers = { headers: tenant.apiKeyHeaders };
      await invoke(updateWebhookConfig, '/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, headers);
      await invoke(
        createEndpoint,
        '/v2/workspace/advancedwebhook/endpoints/create',
        { url: hook.url, filterTypes: ['crdt.update_data'] },
        headers,
      );
      const ann = await open('ann');
      const doc = new Y.Doc();
      doc.getText('content').insert(0, 'typed live');

      await callSocket('$default', ann, { body: encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), 'm9')[0] });

      // The editor's creation (by the authorize with `type`) may be an event of its own, before the live edit's.
      const records = () =>
        hook.requests.map((request) => (JSON.parse(request.body) as { data: { data?: unknown } }).data);
      await waitFor(() => records().some((record) => record.data === 'typed live'), {
        what: "the live edit's crdt.update_data",
      });
      expect(records().find((record) => record.data === 'typed live')).toMatchObject({
        id: 'body',
        data: 'typed live',
        lastUpdatedBy: 'ann',
      });
      expect(hook.requests.every((request) => JSON.parse(request.body).type === 'crdt.update_data')).toBe(true);
    } finally {
      await pipeline.stop();
      await hook.close();
    }
  });
});

describe('presence when a connection died without its $disconnect', () => {
  it("gives a client id to its new connection once the old one is found gone, and tells the room the old one's other clients left", async () => {
    const { tenant, ids, open } = await openRoom();
    const before = await open('ann');
    const bob = await open('bob');
    const presence = (entries: Array<[number, number, string]>) =>
      encodeFrames(
        awarenessMessage(entries.map(([clientId, clock, state]) => ({ clientId, clock, state }))),
        uniqueId('m').slice(-8),
      )[0];
    await callSocket('$default', before, {
      body: presence([
        [7, 1, '{"user":"Ann"}'],
        [8, 1, '{"user":"Ann, second tab"}'],
      ]),
    });
    // The connection dies; API Gateway never runs its $disconnect. The provider reconnects with the same client id.
    gone.add(before);
    const after = await open('ann');
    posted.delete(bob);

    await callSocket('$default', after, { body: presence([[7, 2, '{"user":"Ann"}']]) });

    const toBob = bytesTo(bob).map(readMessage);
    expect(toBob).toEqual([
      // One above the clock relayed for it (decisions §13), so every stock client applies it.
      { kind: 'awareness', entries: [{ clientId: 8, clock: 2, state: 'null' }] },
      { kind: 'awareness', entries: [{ clientId: 7, clock: 2, state: '{"user":"Ann"}' }] },
    ]);
    expect(await entryOf(tenant.apiKeyId, ids, before)).toMatchObject({ closedAt: expect.any(Number) });
  });
});

describe('access while connected, under API Gateway', () => {
  it('refuses a connection without encoding=base64 in AWS, where API Gateway would refuse every binary frame it sends', async () => {
    const { open } = await openRoom();
    const replaced = jest.replaceProperty(
      config,
      'liveConnectionsEndpoint',
      'https://example.execute-api.us-east-1.amazonaws.com/prod',
    );
    try {
      const connectionId = await open('ann', 'binary');

      await callSocket('$default', connectionId, { body: Buffer.from([0, 0, 1, 0]).toString('base64') });

      // One binary frame: the auth message (type 2, permission denied 0) with the reason.
      const [frame] = posted.get(connectionId) ?? [];
      expect(frame.startsWith('\u0002\u0000')).toBe(true);
      expect(frame).toContain('encoding=base64 only');
      expect(deleted).toContain(connectionId);
    } finally {
      replaced.restore();
    }
  });
});

describe('the Management API grant', () => {
  it('is refused to a function whose declaration lacks connections: manage (crdt/get), as IAM would', async () => {
    const refused = runAsRoute('/v2/crdt/get', () => sendFrame('any', 'frame'));

    await expect(refused).rejects.toBeInstanceOf(AccessDeniedException);
    // Taken here, so the check every test ends with sees only unexpected violations.
    expect(takeViolations()).toEqual([
      {
        caller: 'POST /v2/crdt/get',
        command: 'execute-api:PostToConnection',
        missing: [{ action: 'execute-api:ManageConnections', resource: 'connections' }],
      },
    ]);
  });
});

describe('a message the service fails to handle closes its connection, so the client resyncs (decisions §13)', () => {
  const edit = (text: string, id: string) => {
    const doc = new Y.Doc();
    doc.getText('content').insert(0, text);
    return encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), id)[0];
  };

  it('closes the sender and fails the invocation when its update cannot be stored', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');

    const answer = withFault({ command: 'TransactWriteItems', nth: 1 }, () =>
      callSocket('$default', ann, { body: edit('lost?', 'f1') }),
    );

    await expect(answer).rejects.toThrow(/Injected fault/);
    expect(deleted).toContain(ann);
    expect(posted.get(bob)).toBeUndefined();
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(0);
  });

  it('closes the sender and fails the invocation when the editor cannot be read for its sync step 1', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');

    const answer = withFault({ command: 'Query', nth: 2 }, () =>
      callSocket('$default', ann, { body: encodeFrames(new Uint8Array([0, 0, 1, 0]), 'f2')[0] }),
    );

    await expect(answer).rejects.toThrow(/Injected fault/);
    expect(deleted).toContain(ann);
  });

  it('closes a recipient the relay could not reach (not gone: the post failed), keeps the sender, and counts the failure', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const cyd = await open('bob');
    failing.add(bob);

    const answer = callSocket('$default', ann, { body: edit('reaches cyd', 'f3') });

    await expect(answer).rejects.toThrow(/closed so that they resync/);
    failing.delete(bob);
    expect(deleted).toContain(bob);
    expect(deleted).not.toContain(ann);
    expect(
      bytesTo(cyd)
        .map(readMessage)
        .map((message) => message.kind),
    ).toEqual(['update']);
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(1);
  });

  it('closes the sender when the answer to its own sync step 1 cannot be posted', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');
    failing.add(ann);

    const answer = callSocket('$default', ann, { body: encodeFrames(new Uint8Array([0, 0, 1, 0]), 'f4')[0] });

    await expect(answer).rejects.toThrow();
    failing.delete(ann);
    expect(deleted).toContain(ann);
  });
});

describe('framing a client gets wrong closes only its own connection (decisions §13)', () => {
  it('closes a connection whose chunks of one message disagree on their count, and applies none of it', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const source = new Y.Doc();
    source
      .getText('content')
      .insert(0, Buffer.from(Array.from({ length: 60_000 }, (_, i) => i % 251)).toString('base64'));
    const frames = encodeFrames(updateMessage(Y.encodeStateAsUpdate(source)), 'c1');
    const count = frames.length;
    // The last chunk claims one more part than the others: with it, the message would be "complete" early.
    const lying = frames.map((frame, index) =>
      index === count - 1 ? frame.replace(`/${count}:`, `/${count + 1}:`) : frame,
    );

    for (const frame of lying) await callSocket('$default', ann, { body: frame });

    expect(count).toBeGreaterThan(2);
    expect(bytesTo(ann).map(reasonOf)).toEqual(['Malformed frame: the chunks of one message disagree on their count.']);
    expect(deleted).toContain(ann);
    expect(posted.get(bob)).toBeUndefined();
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(0);
  });

  it('refuses a message announced in more chunks than 1 MiB needs at its first chunk, saying "Message too large"', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');

    await callSocket('$default', ann, { body: `~big:0/48:${'A'.repeat(30_000)}` });

    expect(bytesTo(ann).map(reasonOf)).toEqual(["Message too large: a client's message is at most 1048576 bytes."]);
    expect(deleted).toContain(ann);
  });
});

describe('batch frames: several whole messages in one frame (decisions §13 "Framing")', () => {
  const update = (text: string) => {
    const doc = new Y.Doc();
    doc.getText('content').insert(0, text);
    return Y.encodeStateAsUpdate(doc);
  };

  it('handles each message of a batch in order: stores the update once, relays it and then the presence', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const typed = update('typed with the caret');

    const answer = await callSocket('$default', ann, {
      body: encodeBatch([updateMessage(typed), awarenessMessage([{ clientId: 61, clock: 1, state: '{"cursor":20}' }])]),
    });

    expect(answer).toEqual({ statusCode: 200 });
    const relayed = bytesTo(bob).map(readMessage);
    expect(relayed.map((message) => message.kind)).toEqual(['update', 'awareness']);
    expect(Buffer.from((relayed[0] as { update: Uint8Array }).update).equals(Buffer.from(typed))).toBe(true);
    expect(relayed[1]).toEqual({ kind: 'awareness', entries: [{ clientId: 61, clock: 1, state: '{"cursor":20}' }] });
    // One post for both, and none to Ann: Bob's presence keeps her provider alive.
    expect(posted.get(bob)).toHaveLength(1);
    expect(bytesTo(ann)).toEqual([]);
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(1);
  });

  it('closes only the connection whose batch holds a malformed part, and handles none of the batch', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const frame = `${encodeBatch([updateMessage(update('never stored')), awarenessMessage([{ clientId: 62, clock: 1, state: '{}' }])])},AAF=`;

    await callSocket('$default', ann, { body: frame });

    expect(bytesTo(ann).map(reasonOf)).toEqual(['Malformed frame: the text is not canonical base64 of a message.']);
    expect(deleted).toContain(ann);
    expect(deleted).not.toContain(bob);
    expect(posted.get(bob)).toBeUndefined();
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(0);
  });
});

describe('nothing lost, nothing stale when a connection closes (decisions §13)', () => {
  const edit = (text: string, id: string) => {
    const doc = new Y.Doc();
    doc.getText('content').insert(0, text);
    return encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), id)[0];
  };
  const presence = (clientId: number, clock: number, state: string) =>
    encodeFrames(awarenessMessage([{ clientId, clock, state }]), uniqueId('m').slice(-8))[0];

  it("stores and relays an update handled after its connection's $disconnect ran (API Gateway does not order them), sending the closed one nothing", async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    await callSocket('$disconnect', ann);

    const answer = await callSocket('$default', ann, { body: edit('typed as the tab closed', 'l1') });

    expect(answer).toEqual({ statusCode: 200 });
    expect(
      bytesTo(bob)
        .map(readMessage)
        .map((message) => message.kind),
    ).toEqual(['update']);
    expect(posted.get(ann)).toBeUndefined();
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(1);
  });

  it('drops the late update of a connection closed because its access ended', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    await db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: memberKeyOf(tenant.apiKeyId, ids, bob),
        UpdateExpression: 'SET checkedAt = :old',
        ExpressionAttributeValues: { ':old': Date.now() - 61_000 },
      }),
    );
    await invoke(
      deleteUsers,
      '/v2/users/delete',
      { organizationId: ids.organizationId, userIds: ['bob'] },
      { headers: tenant.apiKeyHeaders },
    );
    await callSocket('$default', ann, { body: edit('for the room', 'l2') });
    posted.delete(ann);

    await callSocket('$default', bob, { body: edit('after losing access', 'l3') });

    expect(posted.get(ann)).toBeUndefined();
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(1);
  });

  it("tells the room a closed connection's clients left at a clock above the one relayed, and drops echoes of their old state", async () => {
    const { open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const cyd = await open('bob');
    // Each provider sends its own state first, on open.
    await callSocket('$default', bob, { body: presence(51, 1, '{"cursor":0}') });
    await callSocket('$default', ann, { body: presence(41, 3, '{"cursor":1}') });
    posted.delete(bob);
    posted.delete(cyd);

    await callSocket('$disconnect', ann);
    // Bob's provider passes on what it learnt before the removal reached it: Ann's client at its old clock.
    await callSocket('$default', bob, { body: presence(41, 3, '{"cursor":1}') });

    const left = { kind: 'awareness', entries: [{ clientId: 41, clock: 4, state: 'null' }] };
    expect(bytesTo(cyd).map(readMessage)).toEqual([left]);
    expect(bytesTo(bob).map(readMessage)).toEqual([left]);
  });

  it('does not relay presence a connection sent after it closed', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    await callSocket('$default', ann, { body: presence(42, 1, '{"cursor":1}') });
    await callSocket('$disconnect', ann);
    posted.delete(bob);

    await callSocket('$default', ann, { body: presence(42, 2, '{"cursor":2}') });

    expect(posted.get(bob)).toBeUndefined();
  });

  it('makes a client that reconnects after a clean close raise its clock above its departure, so the room sees it again at once', async () => {
    const { open } = await openRoom();
    const before = await open('ann');
    await open('bob');
    await callSocket('$default', before, { body: presence(43, 5, '{"cursor":1}') });
    await callSocket('$disconnect', before);
    const after = await open('ann');

    // The provider reconnects with the same client id and clock; the room holds its departure at clock 6.
    await callSocket('$default', after, { body: presence(43, 5, '{"cursor":1}') });

    expect(bytesTo(after).map(readMessage)).toContainEqual({
      kind: 'awareness',
      entries: [{ clientId: 43, clock: 6, state: 'null' }],
    });
  });

  it('makes a client that reconnects after its connection died unseen raise its clock above the state the room still shows', async () => {
    const { open } = await openRoom();
    const before = await open('ann');
    const bob = await open('bob');
    await callSocket('$default', before, { body: presence(44, 5, '{"cursor":1}') });
    // The connection dies; API Gateway never runs its $disconnect, so the room still shows the client at clock 5.
    gone.add(before);
    const after = await open('ann');
    posted.delete(bob);

    // The provider reconnects with the same client id and clock: the others would ignore the state at clock 5.
    await callSocket('$default', after, { body: presence(44, 5, '{"cursor":1}') });

    expect(bytesTo(after).map(readMessage)).toContainEqual({
      kind: 'awareness',
      entries: [{ clientId: 44, clock: 5, state: 'null' }],
    });
    // The stock client answers its own removal with its state at clock 6, which the room takes and relays.
    await callSocket('$default', after, { body: presence(44, 6, '{"cursor":1}') });
    expect(bytesTo(bob).map(readMessage)).toContainEqual({
      kind: 'awareness',
      entries: [{ clientId: 44, clock: 6, state: '{"cursor":1}' }],
    });
  });

  it('removes the tombstones of connections closed over two minutes ago when another connection closes', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    await callSocket('$disconnect', ann);
    await db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: memberKeyOf(tenant.apiKeyId, ids, ann),
        UpdateExpression: 'SET closedAt = :old',
        ExpressionAttributeValues: { ':old': Date.now() - 121_000 },
      }),
    );

    await callSocket('$disconnect', bob);

    const room = await roomMembers({ apiKeyId: tenant.apiKeyId, ...ids });
    expect(room.map((member) => member.connectionId)).toEqual([bob]);
    expect(await getConnection(ann)).toBeUndefined();
  });
});

describe('a connection past its frame budget (decisions §13)', () => {
  it('is closed once with "Too many messages.", its later frames dropped unstored, while the room goes on', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    const at = Date.now();
    const frame = (message: Uint8Array) => ({ text: encodeFrames(message, uniqueId('m').slice(-8))[0] });
    const $default = socketRoutes.find((route) => route.routeKey === '$default')!;
    const send = (connectionId: string, message: Uint8Array) =>
      runAsSocketRoute($default, () => onMessage(connectionId, frame(message), at));
    const doc = new Y.Doc();
    doc.getText('content').insert(0, 'after the flood');
    const update = updateMessage(Y.encodeStateAsUpdate(doc));

    // All at one moment: the budget's burst, then one more.
    for (let i = 0; i < FRAME_BURST; i += 1) await send(ann, new Uint8Array([2, 0, 0]));
    await send(ann, new Uint8Array([2, 0, 0]));
    await send(ann, update);
    await send(bob, update);

    expect(bytesTo(ann).map(reasonOf)).toEqual(['Too many messages.']);
    expect(deleted.filter((id) => id === ann)).toHaveLength(1);
    expect(await entryOf(tenant.apiKeyId, ids, ann)).toMatchObject({ revoked: true });
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas).toHaveLength(1);
  });
});
