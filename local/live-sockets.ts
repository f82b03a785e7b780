/**
 * The local stand-in for the live-sync WebSocket API (decisions §13, DESIGN "Live sync"): the gateway's HTTP server
 * accepts WebSocket upgrades on LOCAL_LIVE_PATH (and `<LOCAL_LIVE_PATH>/<room>`, where the stock provider puts the
 * room), and calls the same `$connect`, `$default` and `$disconnect` handlers API Gateway would, with the events it
 * would send. The handlers answer through the API Gateway Management API client as in AWS; here its request
 * handler is `managementApi` below, in process, which writes to the sockets.
 *
 * API Gateway's limits are applied where AWS applies them, so that what passes here passes there:
 * - `encoding=base64`: binary frames close the connection with 1003, and a frame over 32 KB with 1009;
 * - `encoding=binary` (the default, offered only here): a message over 1 MiB closes with 1009;
 * - a post over 128 KB to a base64 connection is refused (PayloadTooLargeException), one to a closed connection is
 *   GoneException (410), as the Management API answers; binary connections (local only) take a message of any size.
 * Frames of one connection are handed to `$default` one at a time, in order (API Gateway may run them side by side;
 * the handlers do not depend on either).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Context } from 'aws-lambda';
import {
  API_GATEWAY_FRAME_BYTES,
  API_GATEWAY_MESSAGE_BYTES,
  MAX_CLIENT_MESSAGE_BYTES,
} from '../shared/domain/live/framing';
import { LOCAL_LIVE_PATH, type SocketRouteKey } from '../shared/routes';
import { buildContext } from './gateway';

/** A live handler as the WebSocket API invokes it (functions/live/*.ts). */
export type LiveSocketHandler = (
  event: LiveSocketEvent,
  context: Context,
) => Promise<{ statusCode?: number } | unknown>;

export interface LiveSocketEvent {
  requestContext: {
    routeKey: SocketRouteKey;
    eventType: 'CONNECT' | 'MESSAGE' | 'DISCONNECT';
    connectionId: string;
    domainName: string;
    stage: string;
    apiId: string;
    requestId: string;
    connectedAt: number;
    requestTimeEpoch: number;
    messageDirection: 'IN';
    extendedRequestId: string;
    requestTime: string;
    messageId?: string;
    disconnectStatusCode?: number;
    disconnectReason?: string;
  };
  queryStringParameters?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded: boolean;
}

interface Connection {
  socket: WebSocket;
  encoding: 'binary' | 'base64';
  connectedAt: number;
  /** The frames' handler calls, one after another. */
  queue: Promise<void>;
  /** Settles once the socket has closed and its `$disconnect` has run. */
  finished: Promise<void>;
}

export interface LiveSockets {
  /** The Management API's request handler for the SDK client (shared/adapters/live/management-api.ts). */
  managementApi: ManagementApiHandler;
  /** Open connections (tests, the bench). */
  readonly size: number;
  /** Closes every connection (each runs `$disconnect`) and stops accepting upgrades. */
  close(): Promise<void>;
}

/** The part of the SDK's HttpHandler the client calls. */
export interface ManagementApiHandler {
  handle(request: {
    method: string;
    path: string;
    body?: unknown;
  }): Promise<{ response: { statusCode: number; headers: Record<string, string>; body: Readable } }>;
}

/** How long a stopping stack waits for clients to answer its close before it cuts them. */
const CLOSE_GRACE_MS = 2_000;

/** API Gateway's connection ids: 16 characters of base64, ending in `=`. */
const newConnectionId = () => `${randomBytes(11).toString('base64').slice(0, 15)}=`;

export function attachLiveSockets(
  server: Server,
  handler: (routeKey: SocketRouteKey) => LiveSocketHandler,
): LiveSockets {
  const connections = new Map<string, Connection>();
  const servers = {
    base64: new WebSocketServer({ noServer: true, maxPayload: API_GATEWAY_FRAME_BYTES }),
    binary: new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE_BYTES }),
  };
  let closing = false;

  const invoke = async (
    routeKey: SocketRouteKey,
    connectionId: string,
    extra: Partial<LiveSocketEvent> & { host: string; connectedAt: number },
  ) => {
    const requestId = randomUUID();
    const now = Date.now();
    const event: LiveSocketEvent = {
      requestContext: {
        routeKey,
        eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE',
        connectionId,
        domainName: extra.host,
        stage: 'local',
        apiId: 'local',
        requestId,
        extendedRequestId: requestId,
        connectedAt: extra.connectedAt,
        requestTimeEpoch: now,
        requestTime: new Date(now).toUTCString(),
        messageDirection: 'IN',
        ...extra.requestContext,
      },
      isBase64Encoded: extra.isBase64Encoded ?? false,
      ...(extra.queryStringParameters === undefined ? {} : { queryStringParameters: extra.queryStringParameters }),
      ...(extra.headers === undefined ? {} : { headers: extra.headers }),
      ...(extra.body === undefined ? {} : { body: extra.body }),
    };
    const result = await handler(routeKey)(event, buildContext(`Live${routeKey.slice(1)}`, requestId));
    return typeof result === 'object' && result !== null && 'statusCode' in result
      ? Number((result as { statusCode?: number }).statusCode ?? 200)
      : 200;
  };

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const match = url.pathname === LOCAL_LIVE_PATH || url.pathname.startsWith(`${LOCAL_LIVE_PATH}/`);
    if (!match || closing) {
      socket.end('HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const query: Record<string, string> = Object.fromEntries(url.searchParams);
    // The stock provider puts the room in the path; API Gateway has no path, so the adapter sends it as `room`.
    const pathRoom = url.pathname.slice(LOCAL_LIVE_PATH.length + 1);
    if (pathRoom !== '' && query.room === undefined) query.room = decodeURIComponent(pathRoom);
    const encoding = query.encoding === 'base64' ? 'base64' : 'binary';
    const connectionId = newConnectionId();
    const connectedAt = Date.now();
    const host = request.headers.host ?? 'localhost';
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
    invoke('$connect', connectionId, { host, connectedAt, queryStringParameters: query, headers })
      .then((status) => {
        if (status < 200 || status > 299) {
          socket.end(`HTTP/1.1 ${status} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
          return;
        }
        servers[encoding].handleUpgrade(request, socket, head, (ws) => {
          let finish = (): void => undefined;
          const finished = new Promise<void>((resolve) => {
            finish = resolve;
          });
          const connection: Connection = { socket: ws, encoding, connectedAt, queue: Promise.resolve(), finished };
          connections.set(connectionId, connection);
          ws.on('message', (data: RawData, isBinary: boolean) => {
            if (encoding === 'base64' && isBinary) {
              ws.close(1003, 'Binary frames are not supported with encoding=base64.');
              return;
            }
            const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
            const body = isBinary
              ? { body: bytes.toString('base64'), isBase64Encoded: true }
              : { body: bytes.toString('utf8'), isBase64Encoded: false };
            connection.queue = connection.queue
              .then(() => invoke('$default', connectionId, { host, connectedAt, ...body }))
              .then(
                () => undefined,
                (error: unknown) => console.error('Live gateway: $default failed', error),
              );
          });
          ws.on('error', () => ws.terminate());
          ws.on('close', (code: number, reason: Buffer) => {
            connection.queue = connection.queue
              .then(() => {
                connections.delete(connectionId);
                return invoke('$disconnect', connectionId, {
                  host,
                  connectedAt,
                  requestContext: {
                    disconnectStatusCode: code,
                    disconnectReason: reason.toString('utf8'),
                  } as LiveSocketEvent['requestContext'],
                });
              })
              .then(
                () => undefined,
                (error: unknown) => console.error('Live gateway: $disconnect failed', error),
              )
              .finally(finish);
          });
        });
      })
      .catch((error: unknown) => {
        console.error('Live gateway: $connect failed', error);
        socket.end('HTTP/1.1 500 Internal Server Error\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      });
  };
  server.on('upgrade', onUpgrade);

  const answer = (statusCode: number, error?: string, message?: string) => ({
    response: {
      statusCode,
      headers: (error === undefined ? {} : { 'content-type': 'application/json', 'x-amzn-errortype': error }) as Record<
        string,
        string
      >,
      body: Readable.from(error === undefined ? [] : [Buffer.from(JSON.stringify({ message }))]),
    },
  });

  const managementApi: ManagementApiHandler = {
    async handle(request) {
      const path = decodeURIComponent(request.path);
      const found = /\/@connections\/(.+)$/.exec(path);
      const connection = found === null ? undefined : connections.get(found[1]);
      if (found === null) return answer(404, 'NotFoundException', 'No such resource.');
      if (connection === undefined || connection.socket.readyState !== connection.socket.OPEN)
        return answer(410, 'GoneException', 'The connection is gone.');
      if (request.method === 'DELETE') {
        connection.socket.close(1000, 'Closed by the service.');
        return answer(204);
      }
      if (request.method === 'GET') return answer(200);
      const body = bodyBytes(request.body);
      // API Gateway's limit, for the connections that stand for API Gateway's (binary frames are the local stack's own).
      if (connection.encoding === 'base64' && body.length > API_GATEWAY_MESSAGE_BYTES)
        return answer(413, 'PayloadTooLargeException', 'Message is too large.');
      connection.socket.send(connection.encoding === 'binary' ? body : body.toString('utf8'), {
        binary: connection.encoding === 'binary',
      });
      return answer(200);
    },
  };

  return {
    managementApi,
    get size() {
      return connections.size;
    },
    async close() {
      closing = true;
      server.off('upgrade', onUpgrade);
      const pending = [...connections.values()];
      for (const { socket } of pending) socket.close(1001, 'The server is going away.');
      // Clients answer the close at once; one that does not within CLOSE_GRACE_MS is cut. Either way each
      // connection's $disconnect runs before the stack goes on stopping (the table is still there for it).
      const all = Promise.all(pending.map((connection) => connection.finished));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all, new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
      for (const { socket } of pending) socket.terminate();
      await all;
      servers.base64.close();
      servers.binary.close();
    },
  };
}

function bodyBytes(body: unknown): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new Error('The Management API stand-in takes string or byte bodies only.');
}
