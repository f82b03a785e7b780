/**
 * Answers requests that match no operation (the HTTP API's `$default` route, and the local gateway): an unknown
 * path is 404 NOT_FOUND; a known path with another method is 405 with `Allow: POST` (docs/decisions.md §1).
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { findRoute } from '../../shared/routes';
import { errorResponse, type HttpResult } from '../../shared/http/envelope';

export const handler = async (event: APIGatewayProxyEventV2): Promise<HttpResult> => {
  const requestId = event.requestContext?.requestId ?? randomUUID();
  const path = (event.rawPath ?? '').slice(0, 300);
  const method = event.requestContext?.http?.method ?? 'GET';
  if (findRoute(path)) {
    return errorResponse(405, 'INVALID_ARGUMENT', `Method ${method} is not allowed on ${path}; use POST.`, requestId, {
      headers: { Allow: 'POST' },
    });
  }
  return errorResponse(404, 'NOT_FOUND', `No operation at ${path}.`, requestId);
};
