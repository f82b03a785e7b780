/**
 * Revocation that does not wait for the connection to speak (decisions §13 "Nothing lost, nothing stale"): a REST
 * change that removes or lowers access reaches a SILENT live connection through the table's stream. The socket
 * handlers run under API Gateway's rules with a recording Management API (as in live-handlers.test.ts); the REST
 * changes go through their routes; the changes reader of the stack (functions/workers/stream-changes.ts, every
 * consumer under its own grants, as the local stack runs it) is fed by the local stream poller. No connection sends
 * anything after it opened: only the stream can reach it.
 */
import { Readable } from 'node:stream';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import * as Y from 'yjs';
import { handler as connectHandler } from '../../functions/live/connect';
import { handler as messageHandler } from '../../functions/live/message';
import { consumers as changesConsumers } from '../../functions/workers/stream-changes';
import { runAsSocketRoute, runAsWorker, watchConnectionsClient } from '../../local/grant-check';
import { startStreamPoller, type StreamPoller } from '../../local/stream-poller';
import { connectionsClient, useLocalConnections } from '../../shared/adapters/live/connections';
import { TABLE_NAME, db } from '../../shared/db/client';
import { getEditor } from '../../shared/db/crdt';
import { memberKeyOf } from '../../shared/db/live-connection';
import { streamHandler } from '../../shared/domain/stream/dispatch';
import { encodeFrames, joinChunks, parseFrame } from '../../shared/domain/live/framing';
import { readMessage, updateMessage } from '../../shared/domain/live/protocol';
import { socketRoutes, type SocketRouteKey } from '../../shared/routes';
import { streamChangesWorker } from '../../shared/workers';
import { newTenant, type Tenant } from '../support/fixtures';
import { uniqueId } from '../support/ids';
import { invokeRoute } from '../support/invoke';
import { waitFor } from '../support/wait';

/** What the Management API was asked, per connection. */
const posted = new Map<string, string[]>();
const deleted: string[] = [];

useLocalConnections({
  async handle(request: { method: string; path: string; body?: unknown }) {
    const connectionId = decodeURIComponent(request.path).replace(/^.*\/@connections\//, '');
    if (request.method === 'DELETE') deleted.push(connectionId);
    else posted.set(connectionId, [...(posted.get(connectionId) ?? []), Buffer.from(request.body as Uint8Array).toString('utf8')]);
    return { response: { statusCode: 200, headers: {}, body: Readable.from([]) } };
  },
} as never);
watchConnectionsClient(connectionsClient());

const context = { awsRequestId: 'test', functionName: 'test', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const routeOf = (routeKey: SocketRouteKey) => socketRoutes.find((route) => route.routeKey === routeKey)!;

/** Revocation is expected within seconds; a ceiling of a minute is for a machine many times slower, not a budget. */
const REVOKED_WITHIN = { ceilingMs: 60_000 };

function call(routeKey: '$connect' | '$default', connectionId: string, extra: { query?: Record<string, string>; body?: string }) {
  const handler = routeKey === '$connect' ? connectHandler : messageHandler;
  const event = {
    requestContext: { routeKey, connectionId, eventType: routeKey === '$connect' ? 'CONNECT' : 'MESSAGE', domainName: 'example.execute-api', stage: 'test' },
    isBase64Encoded: false,
    ...(extra.query === undefined ? {} : { queryStringParameters: extra.query }),
    ...(extra.body === undefined ? {} : { body: extra.body }),
  };
  return runAsSocketRoute(routeOf(routeKey), () => handler(event as never, context));
}

/** The protocol messages a connection was sent, reassembled from its base64 frames. */
function messagesTo(connectionId: string) {
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
  return messages.map(readMessage);
}

/** Told `[2, 0, reason]` and closed by the service. */
const closedByService = (connectionId: string) => deleted.includes(connectionId) && messagesTo(connectionId).some((message) => message.kind === 'auth');

let poller: StreamPoller;
let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
  // The changes reader as the local stack runs it: its consumers from its entry, each under its own grants.
  const reader = streamHandler(streamChangesWorker, changesConsumers, (consumer, fn) => runAsWorker(consumer, fn));
  poller = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT as string,
    tableName: process.env.TABLE_NAME as string,
    idleMs: 50,
    workers: [{ worker: streamChangesWorker, handler: (event: DynamoDBStreamEvent) => reader(event, context) }],
  });
});

afterAll(async () => {
  await poller.stop();
});

const rest = (path: string, data: unknown) => invokeRoute(path, data, { headers: tenant.apiKeyHeaders });

/** An organization with editors Ann and Bob, a document, and a way to open a silent connection to its editor. */
async function openRoom() {
  const ids = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
  await rest('/v2/users/add', { organizationId: ids.organizationId, createOrganization: true, users: [{ userId: 'ann', accessRole: 'editor' }, { userId: 'bob', accessRole: 'editor' }] });
  await rest('/v2/organizations/documents/add', { organizationId: ids.organizationId, documents: [{ documentId: ids.documentId, documentName: 'Live' }] });
  const open = async (userId: string) => {
    const answer = await rest('/v2/crdt/live/authorize', { ...ids, userId, type: 'text' });
    const { token } = answer.body.result?.data as { token: string };
    const connectionId = uniqueId('conn');
    expect(await call('$connect', connectionId, { query: { token, encoding: 'base64' } })).toEqual({ statusCode: 200 });
    return connectionId;
  };
  const roomEntry = async (connectionId: string) =>
    (await db.send(new GetCommand({ TableName: TABLE_NAME, Key: memberKeyOf(tenant.apiKeyId, ids, connectionId), ConsistentRead: true }))).Item;
  return { ids, open, roomEntry };
}

describe('revocation of a silent live connection through the table\'s stream', () => {
  it('closes the connections of a user removed from the organization, and only theirs', async () => {
    const { ids, open, roomEntry } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');

    await rest('/v2/users/delete', { organizationId: ids.organizationId, userIds: ['bob'] });

    await waitFor(async () => closedByService(bob) && (await roomEntry(bob)) === undefined, { ...REVOKED_WITHIN, what: 'Bob\'s connection closed and removed' });
    expect(messagesTo(bob).map((message) => message.kind)).toEqual(['auth']);
    expect(deleted).not.toContain(ann);
    expect(await roomEntry(ann)).toBeDefined();
  });

  it('closes every connection of a document that is disabled', async () => {
    const { ids, open, roomEntry } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');

    await rest('/v2/organizations/documents/access/disablestate/update', { organizationId: ids.organizationId, documentIds: [ids.documentId], disabled: true });

    await waitFor(async () => closedByService(ann) && closedByService(bob) && (await roomEntry(ann)) === undefined && (await roomEntry(bob)) === undefined, {
      ...REVOKED_WITHIN,
      what: 'both connections closed and removed',
    });
  });

  it('closes the connection of a user whose only access, a document permission, is removed', async () => {
    const { ids, open, roomEntry } = await openRoom();
    await rest('/v2/auth/permissions/add', { user: { userId: 'cy' }, permissions: { resources: [{ type: 'document', id: ids.documentId, organizationId: ids.organizationId, accessRole: 'editor' }] } });
    const cy = await open('cy');

    await rest('/v2/auth/permissions/remove', { userId: 'cy', permissions: { resources: [{ type: 'document', id: ids.documentId, organizationId: ids.organizationId }] } });

    await waitFor(async () => closedByService(cy) && (await roomEntry(cy)) === undefined, { ...REVOKED_WITHIN, what: 'Cy\'s connection closed and removed' });
  });

  it('makes the connection of an editor lowered to viewer read-only: its updates are neither stored nor relayed', async () => {
    const { ids, open, roomEntry } = await openRoom();
    const ann = await open('ann');
    const bob = await open('bob');

    await rest('/v2/users/update', { organizationId: ids.organizationId, users: [{ userId: 'bob', accessRole: 'viewer' }] });

    await waitFor(async () => (await roomEntry(bob))?.role === 'viewer', { ...REVOKED_WITHIN, what: 'Bob\'s connection recorded as a viewer' });
    const doc = new Y.Doc();
    doc.getText('content').insert(0, 'Bob may only read');
    await call('$default', bob, { body: encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), 'm1')[0] });
    expect(deleted).not.toContain(bob);
    expect(messagesTo(ann).filter((message) => message.kind === 'update')).toEqual([]);
    expect((await getEditor(tenant.apiKeyId, ids))?.deltas ?? []).toEqual([]);
  });

  it('lowers an editor whose permission is written again as viewer', async () => {
    const { ids, open, roomEntry } = await openRoom();
    const grant = (accessRole: string) =>
      rest('/v2/auth/permissions/add', { user: { userId: 'dee' }, permissions: { resources: [{ type: 'document', id: ids.documentId, organizationId: ids.organizationId, accessRole }] } });
    await grant('editor');
    const dee = await open('dee');
    expect((await roomEntry(dee))?.role).toBe('editor');

    await grant('viewer');

    await waitFor(async () => (await roomEntry(dee))?.role === 'viewer', { ...REVOKED_WITHIN, what: 'Dee\'s connection recorded as a viewer' });
    expect(deleted).not.toContain(dee);
  });

  it('re-checks the connections of a user taken out of a group (groups grant nothing: it stays open, checked anew)', async () => {
    const { ids, open, roomEntry } = await openRoom();
    await rest('/v2/organizations/usergroups/add', { organizationId: ids.organizationId, organizationUserGroups: [{ groupId: 'design', groupName: 'Design' }] });
    await rest('/v2/organizations/usergroups/users/add', { organizationId: ids.organizationId, organizationUserGroupId: 'design', userIds: ['bob'] });
    const bob = await open('bob');
    const openedCheck = Number((await roomEntry(bob))?.checkedAt);

    await rest('/v2/organizations/usergroups/users/delete', { organizationId: ids.organizationId, organizationUserGroupId: 'design', userIds: ['bob'] });

    await waitFor(async () => Number((await roomEntry(bob))?.checkedAt) > openedCheck, { ...REVOKED_WITHIN, what: 'Bob\'s connection checked again' });
    expect(deleted).not.toContain(bob);
    expect((await roomEntry(bob))?.role).toBe('editor');
  });
});
