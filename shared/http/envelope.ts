/** The response envelopes of docs/decisions.md §1, as API Gateway HTTP API results. */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ErrorCode } from '../core/errors';

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string> };

function json(statusCode: number, body: unknown, requestId: string, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId, ...headers },
    body: JSON.stringify(body),
  };
}

/**
 * `{"result":{"status":"success","message":...,"data":...}}`; `data` and each of `extra` (next-page tokens) left
 * out when undefined.
 */
export function successResponse(
  message: string,
  data: unknown,
  requestId: string,
  extra: Record<string, string | undefined> = {},
): HttpResult {
  const result: Record<string, unknown> = { status: 'success', message };
  if (data !== undefined) result.data = data;
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) result[name] = value;
  return json(200, { result }, requestId);
}

/** A result of its own shape (Ask AI, Suggest Decision): `{"result": <result>}`. */
export function rawResultResponse(result: unknown, requestId: string): HttpResult {
  return json(200, { result }, requestId);
}

export function errorResponse(
  httpStatus: number,
  code: ErrorCode,
  message: string,
  requestId: string,
  options: { details?: unknown; headers?: Record<string, string> } = {},
): HttpResult {
  const error =
    options.details === undefined ? { status: code, message } : { status: code, message, details: options.details };
  return json(httpStatus, { error }, requestId, options.headers);
}
