/**
 * The one wrapper of the live WebSocket API's handlers (functions/live/*.ts), as `operation` is for the HTTP routes:
 * it checks that the function serves the route key it was built for, gives each call its own log context, reads the
 * event into what the live domain takes (shared/domain/live/socket-events.ts), and answers API Gateway.
 *
 * A failure is never silent (decisions §13 "Nothing lost, nothing stale"): API Gateway tells the client nothing of a
 * failed invocation, so a `$default` message the service failed to handle (a storage error, a timeout) would leave
 * the client connected and out of step for good (the provider resyncs only when it reconnects). The connection is
 * closed instead, so the provider reconnects and resyncs, and the failure is rethrown, so Lambda counts it as an
 * error where the live functions' fault alarms look (infra/alarms.ts). A message that is handled but could not reach
 * some recipients (RelayFailedError: they were closed to resync) counts as an error without closing its sender. A
 * handler that runs out of time is stopped short of the function's timeout and handled as a failure. A failed
 * `$connect` refuses the connection (API Gateway answers the upgrade with an error); the client retries.
 *
 * Each call is one scope of the live metrics (shared/core/metrics.ts), published when it ends: a frame in for
 * `$default`, a failure for a call that fails (what Lambda counts as an error), and the call's duration.
 */
import type { APIGatewayProxyResultV2, APIGatewayProxyWebsocketEventV2, Context } from 'aws-lambda';
import { deleteConnection } from '../adapters/live/management-api';
import { logger, withLogContext } from '../core/logger';
import { LIVE_METRICS, countLive, withLiveMetrics } from '../core/metrics';
import { RelayFailedError } from '../domain/live/room';
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
type SocketEvent = APIGatewayProxyWebsocketEventV2 & {
  queryStringParameters?: Record<string, string | undefined> | null;
};

export type SocketHandler = (event: SocketEvent, context: Context) => Promise<APIGatewayProxyResultV2>;

/** Time kept back from the function's timeout to close the connection of a message that has run out of time. */
export const SOCKET_DEADLINE_MARGIN_MS = 2_000;

/** A live handler stopped short of its function's timeout. */
export class SocketTimeoutError extends Error {
  constructor(routeKey: SocketRouteKey) {
    super(`The ${routeKey} handler ran out of time.`);
  }
}

export function socketHandler(routeKey: SocketRouteKey, handle: (call: SocketCall) => Promise<void>): SocketHandler {
  return (event, context) =>
    withLogContext({ connectionId: event.requestContext.connectionId, routeKey }, () =>
      withLiveMetrics(routeKey, async () => {
        if (event.requestContext.routeKey !== routeKey) {
          logger.error('A live handler was called for another route key.', {
            expected: routeKey,
            got: event.requestContext.routeKey,
          });
          return { statusCode: 500 };
        }
        const call: SocketCall = {
          connectionId: event.requestContext.connectionId,
          query: event.queryStringParameters ?? {},
          ...(routeKey === '$default'
            ? {
                frame: event.isBase64Encoded
                  ? { bytes: new Uint8Array(Buffer.from(event.body ?? '', 'base64')) }
                  : { text: event.body ?? '' },
              }
            : {}),
        };
        if (routeKey === '$default') countLive(LIVE_METRICS.framesIn);
        try {
          await withinDeadline(handle(call), routeKey, context);
          return { statusCode: 200 };
        } catch (error) {
          countLive(LIVE_METRICS.failures);
          if (error instanceof RelayFailedError) {
            logger.error(
              'Live message handled, but not sent to every connection of its room (those were closed to resync).',
              { error, cause: error.cause },
            );
            throw error;
          }
          logger.error('Live handler failed.', { error });
          if (routeKey === '$default') await closeAfterFailure(call.connectionId);
          throw error;
        }
      }),
    );
}

/** `work`, or a SocketTimeoutError SOCKET_DEADLINE_MARGIN_MS before the function's timeout. */
async function withinDeadline(
  work: Promise<void>,
  routeKey: SocketRouteKey,
  context: Context | undefined,
): Promise<void> {
  const remaining = context?.getRemainingTimeInMillis?.();
  if (remaining === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SocketTimeoutError(routeKey)),
      Math.max(0, remaining - SOCKET_DEADLINE_MARGIN_MS),
    );
  });
  try {
    await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Closes the connection of a message that failed, so the client reconnects and resyncs; a failure here is logged. */
async function closeAfterFailure(connectionId: string): Promise<void> {
  try {
    await deleteConnection(connectionId);
  } catch (error) {
    logger.error('The connection of a failed live message could not be closed.', { error });
  }
}
