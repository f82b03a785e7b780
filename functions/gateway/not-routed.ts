/**
 * Answers requests that match no operation (the HTTP API's `$default` route, and the local gateway): `GET
 * /openapi.json` is the published contract (the committed document, bundled into this function); an unknown path
 * is 404 NOT_FOUND; a known path with another method is 405 with `Allow: POST` (docs/decisions.md §1).
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { findRoute } from '../../shared/routes';
import { errorResponse, type HttpResult } from '../../shared/http/envelope';

// A require, not an import: esbuild bundles the JSON, and the type checker does not parse 200 KB of it.
const openApiDocument: unknown = require('../../openapi.json');

export const handler = async (event: APIGatewayProxyEventV2): Promise<HttpResult> => {
  const requestId = event.requestContext?.requestId ?? randomUUID();
  const path = (event.rawPath ?? '').slice(0, 300);
  const method = event.requestContext?.http?.method ?? 'GET';
  if (method === 'GET' && path === '/openapi.json') {
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' },
      body: JSON.stringify(openApiDocument),
    };
  }
  if (findRoute(path)) {
    return errorResponse(405, 'INVALID_ARGUMENT', `Method ${method} is not allowed on ${path}; use POST.`, requestId, {
      headers: { Allow: 'POST' },
    });
  }
  return errorResponse(404, 'NOT_FOUND', `No operation at ${path}.`, requestId);
};
