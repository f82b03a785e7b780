/**
 * The one wrapper of the live WebSocket API's handlers (functions/live/*.ts), as `operation` is for the HTTP routes:
 * it checks that the function serves the route key it was built for, gives each call its own log context, reads the
 * event into what the live domain takes (shared/domain/live/connections.ts), and answers API Gateway. An unexpected
 * failure is logged with its cause and answered 500 (API Gateway tells the client nothing more); on `$connect` a
 * non-2xx answer refuses the connection.
 */
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import { logger, withLogContext } from '../core/logger';
import type { SocketRouteKey } from '../routes';

/** What a handler of a route key gets: the connection, and for `$connect` its query, for `$default` its frame. */
export interface SocketCall {
  connectionId: string;
  /** `$connect`: the query string (`token`, `encoding`, `room`); empty otherwise. */
  query: Readonly<Record<string, string | undefined>>;
  /** `$default`: the frame as text, or as bytes when it was a binary frame (local stack). */
  frame?: { text: string } | { bytes: Uint8Array };
}

/** The `$connect` event carries the query string; the Lambda types leave it out of the WebSocket event. */
type SocketEvent = APIGatewayProxyWebsocketEventV2 & { queryStringParameters?: Record<string, string | undefined> | null };

export type SocketHandler = (event: SocketEvent, context: Context) => Promise<APIGatewayProxyResultV2>;

export function socketHandler(routeKey: SocketRouteKey, handle: (call: SocketCall) => Promise<void>): SocketHandler {
  return (event) =>
    withLogContext({ connectionId: event.requestContext.connectionId, routeKey }, async () => {
      if (event.requestContext.routeKey !== routeKey) {
        logger.error('A live handler was called for another route key.', { expected: routeKey, got: event.requestContext.routeKey });
        return { statusCode: 500 };
      }
      const call: SocketCall = {
        connectionId: event.requestContext.connectionId,
        query: event.queryStringParameters ?? {},
        ...(routeKey === '$default'
          ? { frame: event.isBase64Encoded ? { bytes: new Uint8Array(Buffer.from(event.body ?? '', 'base64')) } : { text: event.body ?? '' } }
          : {}),
      };
      try {
        await handle(call);
        return { statusCode: 200 };
      } catch (error) {
        logger.error('Live handler failed.', { error });
        return { statusCode: 500 };
      }
    });
}
