/**
 * The live WebSocket handlers as API Gateway drives them, for the connected tests of the live path: a recording
 * Management API in place of the network (what each connection was sent, which were closed; connections a test puts
 * in `gone` answer GoneException, posts to those in `failing` a 500), the socket handlers called under their routes'
 * grants, and a room whose silent connections a test opens. Importing it installs the recording Management API for
 * the test file.
 */
import { Readable } from 'node:stream';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { handler as connectHandler } from '../../functions/live/connect';
import { handler as disconnectHandler } from '../../functions/live/disconnect';
import { handler as messageHandler } from '../../functions/live/message';
import { runAsSocketRoute, watchConnectionsClient } from '../../local/grant-check';
import { connectionsClient, useLocalConnections } from '../../shared/adapters/live/management-api';
import { TABLE_NAME, db } from '../../shared/db/client';
import { memberKeyOf } from '../../shared/db/live-connection';
import { joinChunks, parseFrame } from '../../shared/domain/live/framing';
import { readMessage } from '../../shared/domain/live/protocol';
import { socketRoutes, type SocketRouteKey } from '../../shared/routes';
import type { Tenant } from './fixtures';
import { uniqueId } from './ids';
import { invokeRoute } from './invoke';

/** What the Management API was asked to post, per connection (base64 frames). */
export const posted = new Map<string, string[]>();
/** Connections the service closed (DeleteConnection), in order. */
export const deleted: string[] = [];
/** Connections that answer 410 GoneException, as API Gateway does for a closed one. */
export const gone = new Set<string>();
/** Connections a post to fails with a 500 (the Management API failing on its side). */
export const failing = new Set<string>();

useLocalConnections({
  async handle(request: { method: string; path: string; body?: unknown }) {
    const connectionId = decodeURIComponent(request.path).replace(/^.*\/@connections\//, '');
    const answer = (statusCode: number, error?: string) => ({
      response: {
        statusCode,
        headers: (error === undefined
          ? {}
          : { 'x-amzn-errortype': error, 'content-type': 'application/json' }) as Record<string, string>,
        body: Readable.from(error === undefined ? [] : [Buffer.from(JSON.stringify({ message: error }))]),
      },
    });
    if (gone.has(connectionId)) return answer(410, 'GoneException');
    if (failing.has(connectionId) && request.method === 'POST') return answer(500, 'InternalServerErrorException');
    if (request.method === 'DELETE') deleted.push(connectionId);
    else
      posted.set(connectionId, [
        ...(posted.get(connectionId) ?? []),
        Buffer.from(request.body as Uint8Array).toString('utf8'),
      ]);
    return answer(200);
  },
} as never);
watchConnectionsClient(connectionsClient());

export const lambdaContext = {
  awsRequestId: 'test',
  functionName: 'test',
  getRemainingTimeInMillis: () => 60_000,
} as unknown as Context;

/** Calls the handler of a route key for a connection, under its route's grants, with the event API Gateway sends. */
export function callSocket(
  routeKey: SocketRouteKey,
  connectionId: string,
  extra: { query?: Record<string, string>; body?: string } = {},
) {
  const handler =
    routeKey === '$connect' ? connectHandler : routeKey === '$default' ? messageHandler : disconnectHandler;
  const route = socketRoutes.find((entry) => entry.routeKey === routeKey)!;
  const event = {
    requestContext: {
      routeKey,
      connectionId,
      eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$default' ? 'MESSAGE' : 'DISCONNECT',
      domainName: 'example.execute-api',
      stage: 'test',
    },
    isBase64Encoded: false,
    ...(extra.query === undefined ? {} : { queryStringParameters: extra.query }),
    ...(extra.body === undefined ? {} : { body: extra.body }),
  };
  return runAsSocketRoute(route, () => handler(event as never, lambdaContext));
}

/** The protocol messages a connection was sent, as bytes, reassembled from its base64 frames (whole, batch, chunks). */
export function bytesTo(connectionId: string): Uint8Array[] {
  const messages: Uint8Array[] = [];
  const parts = new Map<string, string[]>();
  for (const frame of posted.get(connectionId) ?? []) {
    const parsed = parseFrame(frame);
    if (parsed.kind === 'whole' || parsed.kind === 'batch') {
      messages.push(...(parsed.kind === 'whole' ? [parsed.message] : parsed.messages));
      continue;
    }
    const list = parts.get(parsed.id) ?? [];
    list[parsed.index] = parsed.part;
    parts.set(parsed.id, list);
    if (list.filter((part) => part !== undefined).length === parsed.count) messages.push(joinChunks(list));
  }
  return messages;
}

/** The protocol messages a connection was sent, read. */
export const messagesTo = (connectionId: string) => bytesTo(connectionId).map(readMessage);

/** Told `[2, 0, reason]` and closed by the service. */
export const closedByService = (connectionId: string) =>
  deleted.includes(connectionId) && messagesTo(connectionId).some((message) => message.kind === 'auth');

/**
 * An organization of `tenant` with editors Ann and Bob and a document: REST calls as the tenant, a way to open a
 * silent base64 connection to the document's editor for a user, and a connection's room entry as stored.
 */
export async function openLiveRoom(tenant: Tenant) {
  const rest = (path: string, data: unknown) => invokeRoute(path, data, { headers: tenant.apiKeyHeaders });
  const ids = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
  await rest('/v2/users/add', {
    organizationId: ids.organizationId,
    createOrganization: true,
    users: [
      { userId: 'ann', accessRole: 'editor' },
      { userId: 'bob', accessRole: 'editor' },
    ],
  });
  await rest('/v2/organizations/documents/add', {
    organizationId: ids.organizationId,
    documents: [{ documentId: ids.documentId, documentName: 'Live' }],
  });
  const open = async (userId: string) => {
    const answer = await rest('/v2/crdt/live/authorize', { ...ids, userId, type: 'text' });
    const { token } = answer.body.result?.data as { token: string };
    const connectionId = uniqueId('conn');
    const opened = await callSocket('$connect', connectionId, { query: { token, encoding: 'base64' } });
    if ((opened as { statusCode?: number }).statusCode !== 200)
      throw new Error(`Connection of ${userId} not accepted: ${JSON.stringify(opened)}`);
    return connectionId;
  };
  const roomEntry = async (connectionId: string) =>
    (
      await db.send(
        new GetCommand({
          TableName: TABLE_NAME,
          Key: memberKeyOf(tenant.apiKeyId, ids, connectionId),
          ConsistentRead: true,
        }),
      )
    ).Item;
  return { ids, rest, open, roomEntry };
}
