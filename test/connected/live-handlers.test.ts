/**
 * The live WebSocket handlers as API Gateway drives them (decisions §13), which the local gateway does not: every
 * frame is its own invocation and may run beside the others (chunks of one message arrive out of order, at the same
 * time), a recipient that is gone answers GoneException, and the Management API is IAM-guarded. The handlers run
 * through their exports under their routes' grants against DynamoDB Local; the Management API is the SDK client with
 * a recording request handler in place of the network.
 */
import { Readable } from 'node:stream';
import type { Context } from 'aws-lambda';
import * as Y from 'yjs';
import { handler as connectHandler } from '../../functions/live/connect';
import { handler as disconnectHandler } from '../../functions/live/disconnect';
import { handler as messageHandler } from '../../functions/live/message';
import { handler as addUsers } from '../../functions/users/add';
import { handler as addDocuments } from '../../functions/documents/add';
import { handler as authorizeHandler } from '../../functions/crdt/live-authorize';
import { AccessDeniedException, runAsRoute, runAsSocketRoute, takeViolations, watchConnectionsClient } from '../../local/grant-check';
import { connectionsClient, sendFrame, useLocalConnections } from '../../shared/adapters/live/connections';
import { getEditor } from '../../shared/db/crdt';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { handler as deleteUsers } from '../../functions/users/delete';
import { config } from '../../shared/core/config';
import { TABLE_NAME, db } from '../../shared/db/client';
import { getConnection, memberKeyOf } from '../../shared/db/live-connection';
import { encodeFrames, joinChunks, parseFrame } from '../../shared/domain/live/framing';
import { awarenessMessage, readMessage, updateMessage } from '../../shared/domain/live/protocol';
import { socketRoutes, type SocketRouteKey } from '../../shared/routes';
import { handler as updateWebhookConfig } from '../../functions/workspace/advancedwebhookconfig-update';
import { handler as createEndpoint } from '../../functions/workspace/advancedwebhook-endpoints-create';
import { newTenant } from '../support/fixtures';
import { startPipeline, startReceiver } from '../support/webhook-pipeline';
import { uniqueId } from '../support/ids';
import { invoke } from '../support/invoke';
import { waitFor } from '../support/wait';

/** What the Management API was asked, per connection; connections in `gone` answer 410 GoneException. */
const posted = new Map<string, string[]>();
const deleted: string[] = [];
const gone = new Set<string>();

useLocalConnections({
  async handle(request: { method: string; path: string; body?: unknown }) {
    const connectionId = decodeURIComponent(request.path).replace(/^.*\/@connections\//, '');
    const answer = (statusCode: number, error?: string) => ({
      response: {
        statusCode,
        headers: (error === undefined ? {} : { 'x-amzn-errortype': error, 'content-type': 'application/json' }) as Record<string, string>,
        body: Readable.from(error === undefined ? [] : [Buffer.from(JSON.stringify({ message: error }))]),
      },
    });
    if (gone.has(connectionId)) return answer(410, 'GoneException');
    if (request.method === 'DELETE') deleted.push(connectionId);
    else posted.set(connectionId, [...(posted.get(connectionId) ?? []), Buffer.from(request.body as Uint8Array).toString('utf8')]);
    return answer(200);
  },
} as never);
watchConnectionsClient(connectionsClient());

const context = { awsRequestId: 'test', functionName: 'test', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const routeOf = (routeKey: SocketRouteKey) => socketRoutes.find((route) => route.routeKey === routeKey)!;

function call(routeKey: SocketRouteKey, connectionId: string, extra: { query?: Record<string, string>; body?: string } = {}) {
  const handler = routeKey === '$connect' ? connectHandler : routeKey === '$default' ? messageHandler : disconnectHandler;
  const event = {
    requestContext: { routeKey, connectionId, eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$default' ? 'MESSAGE' : 'DISCONNECT', domainName: 'example.execute-api', stage: 'test' },
    isBase64Encoded: false,
    ...(extra.query === undefined ? {} : { queryStringParameters: extra.query }),
    ...(extra.body === undefined ? {} : { body: extra.body }),
  };
  return runAsSocketRoute(routeOf(routeKey), () => handler(event as never, context));
}

/** The protocol messages a connection was sent, reassembled from its base64 frames. */
function messagesTo(connectionId: string): Uint8Array[] {
  const messages: Uint8Array[] = [];
  const parts = new Map<string, string[]>();
  for (const frame of posted.get(connectionId) ?? []) {
    const parsed = parseFrame(frame);
    if (parsed.kind === 'whole') {
      messages.push(parsed.message);
      continue;
    }
    const list = parts.get(parsed.id) ?? [];
    list[parsed.index] = parsed.part;
    parts.set(parsed.id, list);
    if (list.filter((part) => part !== undefined).length === parsed.count) messages.push(joinChunks(list));
  }
  return messages;
}

async function openRoom() {
  const tenant = await newTenant();
  const ids = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
  await invoke(addUsers, '/v2/users/add', { organizationId: ids.organizationId, createOrganization: true, users: [{ userId: 'ann', name: 'Ann', accessRole: 'editor' }, { userId: 'bob', name: 'Bob', accessRole: 'editor' }] }, { headers: tenant.apiKeyHeaders });
  await invoke(addDocuments, '/v2/organizations/documents/add', { organizationId: ids.organizationId, documents: [{ documentId: ids.documentId, documentName: 'Live' }] }, { headers: tenant.apiKeyHeaders });
  const session = async (userId: string) => (await invoke(authorizeHandler, '/v2/crdt/live/authorize', { ...ids, userId, type: 'text' }, { headers: tenant.apiKeyHeaders })).body.result?.data as { token: string; room: string };
  const open = async (userId: string, encoding = 'base64') => {
    const connectionId = uniqueId('conn');
    const { token } = await session(userId);
    const answer = await call('$connect', connectionId, { query: { token, encoding } });
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
    source.getText('content').insert(0, Buffer.from(Array.from({ length: 150_000 }, (_, i) => i % 251)).toString('base64'));
    const update = Y.encodeStateAsUpdate(source);
    const frames = encodeFrames(updateMessage(update), 'm1');

    const answers = await Promise.all([...frames].reverse().map((frame) => call('$default', ann, { body: frame })));

    expect(frames.length).toBeGreaterThan(5);
    expect(answers.every((answer) => (answer as { statusCode: number }).statusCode === 200)).toBe(true);
    const relayed = messagesTo(bob).map(readMessage).filter((message) => message.kind === 'update');
    expect(relayed).toHaveLength(1);
    expect(Buffer.from((relayed[0] as { update: Uint8Array }).update).equals(Buffer.from(update))).toBe(true);
    expect(messagesTo(ann)).toEqual([]);
    const stored = await getEditor(tenant.apiKeyId, ids);
    expect(stored?.deltas).toHaveLength(1);
  });

  it('removes a recipient that is gone (GoneException) and never sends to it again', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    gone.add(bob);
    const edit = (text: string) => {
      const doc = new Y.Doc();
      doc.getText('content').insert(0, text);
      return encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), uniqueId('m').slice(-8))[0];
    };

    await call('$default', ann, { body: edit('first') });
    const afterFirst = await getConnection(bob);
    gone.delete(bob);
    await call('$default', ann, { body: edit('second') });

    expect(afterFirst).toBeUndefined();
    expect(posted.get(bob)).toBeUndefined();
  });

  it('answers $disconnect of a connection it never knew, and of one already removed, without failing', async () => {
    const { open } = await openRoom();
    const ann = await open('ann');

    const first = await call('$disconnect', ann);
    const again = await call('$disconnect', ann);
    const unknown = await call('$disconnect', uniqueId('conn'));

    expect([first, again, unknown]).toEqual([{ statusCode: 200 }, { statusCode: 200 }, { statusCode: 200 }]);
    expect(await getConnection(ann)).toBeUndefined();
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
      await invoke(createEndpoint, '/v2/workspace/advancedwebhook/endpoints/create', { url: hook.url, filterTypes: ['crdt.update_data'] }, headers);
      const ann = await open('ann');
      const doc = new Y.Doc();
      doc.getText('content').insert(0, 'typed live');

      await call('$default', ann, { body: encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), 'm9')[0] });

      // The editor's creation (by the authorize with `type`) may be an event of its own, before the live edit's.
      const records = () => hook.requests.map((request) => (JSON.parse(request.body) as { data: { data?: unknown } }).data);
      await waitFor(() => records().some((record) => record.data === 'typed live'), { what: 'the live edit\'s crdt.update_data' });
      expect(records().find((record) => record.data === 'typed live')).toMatchObject({ id: 'body', data: 'typed live', lastUpdatedBy: 'ann' });
      expect(hook.requests.every((request) => JSON.parse(request.body).type === 'crdt.update_data')).toBe(true);
    } finally {
      await pipeline.stop();
      await hook.close();
    }
  });
});

describe('presence when a connection died without its $disconnect', () => {
  it("gives a client id to its new connection once the old one is found gone, and tells the room the old one's other clients left", async () => {
    const { open } = await openRoom();
    const before = await open('ann');
    const bob = await open('bob');
    const presence = (entries: Array<[number, number, string]>) => encodeFrames(awarenessMessage(entries.map(([clientId, clock, state]) => ({ clientId, clock, state }))), uniqueId('m').slice(-8))[0];
    await call('$default', before, { body: presence([[7, 1, '{"user":"Ann"}'], [8, 1, '{"user":"Ann, second tab"}']]) });
    // The connection dies; API Gateway never runs its $disconnect. The provider reconnects with the same client id.
    gone.add(before);
    const after = await open('ann');
    posted.delete(bob);

    await call('$default', after, { body: presence([[7, 2, '{"user":"Ann"}']]) });

    const toBob = messagesTo(bob).map(readMessage);
    expect(toBob).toEqual([
      { kind: 'awareness', entries: [{ clientId: 8, clock: 1, state: 'null' }] },
      { kind: 'awareness', entries: [{ clientId: 7, clock: 2, state: '{"user":"Ann"}' }] },
    ]);
    expect(await getConnection(before)).toBeUndefined();
  });
});

describe('access while connected, under API Gateway', () => {
  it('checks a member that has been silent past the recheck bound before sending it anything, and removes it when its access is gone', async () => {
    const { tenant, ids, open } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');
    // Bob's last check was a minute ago (he has said nothing since), and Bob has left the organization.
    await db.send(new UpdateCommand({ TableName: TABLE_NAME, Key: memberKeyOf(tenant.apiKeyId, ids, bob), UpdateExpression: 'SET checkedAt = :old', ExpressionAttributeValues: { ':old': Date.now() - 61_000 } }));
    await invoke(deleteUsers, '/v2/users/delete', { organizationId: ids.organizationId, userIds: ['bob'] }, { headers: tenant.apiKeyHeaders });
    const doc = new Y.Doc();
    doc.getText('content').insert(0, 'not for Bob');

    await call('$default', ann, { body: encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), 'm2')[0] });

    const toBob = messagesTo(bob).map(readMessage);
    expect(toBob.map((message) => message.kind)).toEqual(['auth']);
    expect(deleted).toContain(bob);
    expect(await getConnection(bob)).toBeUndefined();
  });

  it('refuses a connection without encoding=base64 in AWS, where API Gateway would refuse every binary frame it sends', async () => {
    const { open } = await openRoom();
    const replaced = jest.replaceProperty(config, 'liveConnectionsEndpoint', 'https://example.execute-api.us-east-1.amazonaws.com/prod');
    try {
      const connectionId = await open('ann', 'binary');

      await call('$default', connectionId, { body: Buffer.from([0, 0, 1, 0]).toString('base64') });

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
    expect(takeViolations()).toEqual([{ caller: 'POST /v2/crdt/get', command: 'execute-api:PostToConnection', missing: [{ action: 'execute-api:ManageConnections', resource: 'connections' }] }]);
  });
});
