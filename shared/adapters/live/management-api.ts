/**
 * The API Gateway Management API of the live WebSocket API (decisions §13), the live connections' sending side —
 * PostToConnection to send a frame, DeleteConnection to close — through the SDK's client, built once per process.
 * In AWS the client calls the stage's endpoint (LIVE_CONNECTIONS_ENDPOINT) with the function's role, which holds
 * `execute-api:ManageConnections` on that stage only (shared/grants.ts). On the local stack the same client runs with
 * an in-process request handler that the local gateway installs (local/live-sockets.ts): the SDK's own signing,
 * serialization and error parsing run as in AWS, and only the network hop is replaced.
 */
import {
  ApiGatewayManagementApiClient,
  type ApiGatewayManagementApiClientConfig,
  DeleteConnectionCommand,
  GetConnectionCommand,
  GoneException,
  PostToConnectionCommand,
} from '@aws-sdk/client-apigatewaymanagementapi';
import { config } from '../../core/config';
import { LIVE_METRICS, countLive } from '../../core/metrics';

/** The connection is closed (API Gateway's GoneException): the caller removes it, and never retries the send. */
export class ConnectionGoneError extends Error {
  constructor(readonly connectionId: string) {
    super(`Live connection ${connectionId} is gone.`);
  }
}

/** Where the local stand-in plugs in: a request handler in place of the network (set before any handler runs). */
type RequestHandler = NonNullable<ApiGatewayManagementApiClientConfig['requestHandler']>;
let localHandler: RequestHandler | undefined;
/** The endpoint the local client is built with: never dialled, the stand-in answers every request. */
export const LOCAL_CONNECTIONS_ENDPOINT = 'http://live-connections.local';

export function useLocalConnections(handler: RequestHandler): void {
  localHandler = handler;
  client = undefined;
}

let client: ApiGatewayManagementApiClient | undefined;

/** The process's Management API client. Throws when neither the endpoint nor the local stand-in is configured. */
export function connectionsClient(): ApiGatewayManagementApiClient {
  if (client !== undefined) return client;
  if (config.liveConnectionsEndpoint !== undefined) {
    client = new ApiGatewayManagementApiClient({ endpoint: config.liveConnectionsEndpoint, maxAttempts: 3 });
  } else if (localHandler !== undefined) {
    client = new ApiGatewayManagementApiClient({
      endpoint: LOCAL_CONNECTIONS_ENDPOINT,
      requestHandler: localHandler,
      maxAttempts: 1,
    });
  } else {
    throw new Error(
      "Live connections are not configured: set LIVE_CONNECTIONS_ENDPOINT (the WebSocket API stage's https endpoint).",
    );
  }
  return client;
}

/**
 * Sends one frame (text for a string, binary for bytes). Throws ConnectionGoneError when the connection is closed.
 * Counts the post (LivePosts) or the connection found gone (LiveGoneConnections) in the live metrics.
 */
export async function sendFrame(connectionId: string, frame: string | Uint8Array): Promise<void> {
  try {
    await connectionsClient().send(
      new PostToConnectionCommand({
        ConnectionId: connectionId,
        Data: typeof frame === 'string' ? Buffer.from(frame, 'utf8') : frame,
      }),
    );
    countLive(LIVE_METRICS.posts);
  } catch (error) {
    if (error instanceof GoneException) {
      countLive(LIVE_METRICS.goneConnections);
      throw new ConnectionGoneError(connectionId);
    }
    throw error;
  }
}

/** Closes a connection (DeleteConnection); one that is already gone is closed. */
export async function deleteConnection(connectionId: string): Promise<void> {
  try {
    await connectionsClient().send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
  } catch (error) {
    if (!(error instanceof GoneException)) throw error;
  }
}

/**
 * Whether a connection is still open (GetConnection). A connection whose `$disconnect` never ran (a crash, or API
 * Gateway's best effort) keeps its items until their TTL: this tells a stale entry from a live one.
 */
export async function connectionIsOpen(connectionId: string): Promise<boolean> {
  try {
    await connectionsClient().send(new GetConnectionCommand({ ConnectionId: connectionId }));
    return true;
  } catch (error) {
    if (error instanceof GoneException) return false;
    throw error;
  }
}
