/**
 * The middlewares of the one stack (composed in shared/http/operation.ts), in the order a request meets them:
 * request scope → JSON envelope → authentication → validation → handler → success envelope; the error mapper
 * answers for every failure on the way.
 */
import { randomUUID } from 'node:crypto';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { findRoute, type AuthLevel, type Route } from '../routes';
import { authenticate, type Caller } from './auth';
import type { JSONObject } from '@aws-lambda-powertools/commons/types';
import { idempotencyKeyOf, idempotencyScope, type IdempotentRequest } from './idempotency-key';
import { errorResponse, rawResultResponse, successResponse, type HttpResult } from './envelope';
import { InvalidArgumentError, ServiceError, invalidFields, isBusy, publicErrorOf } from '../core/errors';
import { logger } from '../core/logger';
import * as z from 'zod/mini';
// Configures zod's messages (English, "Required.") before any schema runs.
import './schemas';

/** Request bodies above this are refused with HTTP 413 (docs/decisions.md §1). */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * What a handler returns: a message with optional data and next-page token (named as the operation's contract
 * says), or (Ask AI, Suggest Decision) a result of its own shape.
 */
export type OperationOutput = ({ message: string; data?: unknown } & PageTokenField) | { result: unknown };

/** The next-page token sits beside `data` in `result`; absent on the last page (docs/decisions.md §1). */
export type PageTokenField = { nextPageToken?: string; pageToken?: string };

export interface RequestState {
  requestId: string;
  startedAt: number;
  route: Route;
  sourceIp: string;
  headers: Record<string, string>;
  body?: Record<string, unknown>;
  caller?: Caller;
  input?: unknown;
  /** Set when the request carries an Idempotency-Key and is the first with it: its answer is recorded. */
  idempotent?: IdempotentRequest;
}

/** The API Gateway event, carrying what the middlewares learned about the request. */
export type OperationEvent = APIGatewayProxyEventV2 & { state?: RequestState };

type Middleware = MiddlewareObj<OperationEvent, HttpResult | OperationOutput>;

function state(event: OperationEvent): RequestState {
  if (!event.state) throw new Error('Request state is missing: requestScope must run first.');
  return event.state;
}

/** Header names are case-insensitive: keep one lower-case map. */
function lowerCaseHeaders(headers: APIGatewayProxyEventV2['headers'] | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value !== undefined) result[name.toLowerCase()] = value;
  }
  return result;
}

/** Path of the operation: from the route key in AWS (`POST /v2/x`), from the raw path elsewhere. */
function requestPath(event: APIGatewayProxyEventV2): string {
  const routeKey = event.routeKey ?? '';
  return routeKey.startsWith('POST /') ? routeKey.slice('POST '.length) : (event.rawPath ?? '');
}

/**
 * Finds the route, puts the request id and path on the request's log lines (its log context, opened by
 * `operation`), and checks the handler was built for the route's auth level.
 */
export function requestScope(declaredAuth: AuthLevel): Middleware {
  return {
    before: (request) => {
      const { event } = request;
      const requestId = event.requestContext?.requestId ?? request.context?.awsRequestId ?? randomUUID();
      const path = requestPath(event);
      logger.appendKeys({ requestId, path });
      const route = findRoute(path);
      if (!route || route.auth !== declaredAuth) {
        // A deployment error, not a client error: the function serves a path it was not built for.
        const placeholder: Route = { path, entry: '', auth: declaredAuth, table: 'read' };
        event.state = { requestId, startedAt: Date.now(), route: placeholder, sourceIp: '', headers: {} };
        throw new Error(`Route ${path} is not served by a handler with auth level ${declaredAuth}.`);
      }
      event.state = {
        requestId,
        startedAt: Date.now(),
        route,
        sourceIp: event.requestContext?.http?.sourceIp ?? '',
        headers: lowerCaseHeaders(event.headers),
      };
    },
  };
}

const ENVELOPE_MESSAGE = 'Request body must be a JSON object of the form {"data": {...}}.';

/** Size cap, content type, JSON parse and the `{data: {...}}` envelope. */
export function jsonEnvelope(): Middleware {
  return {
    before: ({ event }) => {
      const current = state(event);
      const raw = event.body ?? '';
      const body = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      if (body.length > MAX_BODY_BYTES) {
        throw new InvalidArgumentError('Request body exceeds the limit of 1 MiB (1048576 bytes).', { httpStatus: 413 });
      }
      const contentType = (current.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (contentType !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(contentType)) {
        throw new InvalidArgumentError('Content-Type must be application/json.');
      }
      const text = decodeUtf8(body);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new InvalidArgumentError(`Request body is not valid JSON. ${ENVELOPE_MESSAGE}`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new InvalidArgumentError(ENVELOPE_MESSAGE);
      const data = (parsed as Record<string, unknown>).data;
      if (data === null || typeof data !== 'object' || Array.isArray(data))
        throw new InvalidArgumentError(ENVELOPE_MESSAGE);
      const malformed = firstMalformedValue(parsed);
      if (malformed !== undefined) throw invalidFields([malformed]);
      current.body = data as Record<string, unknown>;
    },
  };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The body as text; refuses bytes that are not UTF-8 rather than silently replacing them. */
function decodeUtf8(body: Buffer): string {
  try {
    return UTF8.decode(body);
  } catch {
    throw new InvalidArgumentError('Request body is not valid UTF-8.');
  }
}

/** Objects and arrays counted together, the `{data: …}` wrapper included (docs/decisions.md §1). */
export const MAX_JSON_DEPTH = 32;

/**
 * The first value anywhere in the parsed body (free-form JSON fields included) that no operation may store, with
 * its path: nesting deeper than MAX_JSON_DEPTH, a string or key name that is not well-formed Unicode (a lone
 * surrogate would be turned into U+FFFD when encoded, so two different ids could meet on one key), or a number too
 * large for a double. Any other number is valid JSON and is kept: free-form JSON is stored as a JSON string or as
 * Yjs content, and a number field stored as a DynamoDB number states its range (storableNumber, z.int). Walks
 * with an explicit stack, never recursion, so no input can exhaust the call stack; undefined when all is well.
 */
function firstMalformedValue(body: object): { path: string; message: string } | undefined {
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value: body, path: '', depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path, depth } = next;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return { path, message: 'Must be well-formed Unicode (no lone surrogates).' };
    } else if (typeof value === 'number') {
      // JSON allows 1e400; JavaScript reads it as Infinity, which no field can hold (JSON.stringify writes null).
      if (!Number.isFinite(value)) return { path, message: 'Numbers must be finite (at most about 1.8e308 in size).' };
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_JSON_DEPTH)
        return {
          path,
          message: `JSON may nest at most ${MAX_JSON_DEPTH} levels (the {"data": ...} wrapper included).`,
        };
      for (const [name, child] of Object.entries(value)) {
        const childPath = path === '' ? name : `${path}.${name}`;
        if (!name.isWellFormed())
          return { path: childPath, message: 'Key names must be well-formed Unicode (no lone surrogates).' };
        pending.push({ value: child, path: childPath, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/** Credentials for the route's level (shared/http/auth.ts). */
export function authentication(): Middleware {
  return {
    before: async ({ event }) => {
      const current = state(event);
      current.caller = await authenticate(current.route.auth, current.headers);
      logger.appendKeys(
        current.caller.level === 'apiKey'
          ? { apiKey: current.caller.apiKeyId }
          : current.caller.level === 'workspace'
            ? { workspaceId: current.caller.workspaceId }
            : {},
      );
    },
  };
}

/**
 * `Idempotency-Key` (shared/http/idempotency.ts): after authentication, before validation. A repeat of a recorded
 * request is answered here with the first answer; the first request's answer (success or 4xx) is recorded when
 * it is known, in `after` (registered before the success envelope, it sees the wrapped answer) or `onError`.
 */
export function idempotency(): Middleware {
  // The records' module (Powertools Idempotency) loads with the first request that carries a key, not at cold start.
  const records = () => import('./idempotency');
  return {
    before: async (request) => {
      const current = state(request.event);
      const key = idempotencyKeyOf(current.headers);
      if (key === undefined || current.caller === undefined || current.body === undefined) return undefined;
      const claimed: IdempotentRequest = {
        scope: idempotencyScope(current.caller, current.sourceIp),
        key,
        data: current.body as JSONObject,
      };
      const remainingMs = request.context?.getRemainingTimeInMillis?.() ?? 29_000;
      const first = await (await records()).claim(current.route.path, claimed, remainingMs, current.requestId);
      if (first !== undefined) {
        logOutcome(request.event, first.statusCode);
        return first;
      }
      current.idempotent = claimed;
      return undefined;
    },
    after: async (request) => {
      const current = state(request.event);
      if (current.idempotent !== undefined)
        await (await records()).settle(current.route.path, current.idempotent, request.response as HttpResult);
    },
    onError: async (request) => {
      const current = request.event.state;
      if (current?.idempotent !== undefined)
        await (
          await records()
        ).settle(current.route.path, current.idempotent, answerFor(request.error, current.requestId));
    },
  };
}

/** Validates `data`; every failing field is listed in `details.issues` as `{path, message}`. */
export function validation(schema: z.ZodMiniType): Middleware {
  return {
    before: ({ event }) => {
      const current = state(event);
      const parsed = schema.safeParse(current.body);
      if (parsed.success) {
        current.input = parsed.data;
        return;
      }
      const issues = parsed.error.issues
        .flatMap((issue) => namedIssues(issue))
        .map((issue) => ({
          path: ['data', ...issue.path.map(String)].join('.'),
          message: issue.message,
        }));
      throw invalidFields(issues);
    },
  };
}

/**
 * The issues to report for one zod issue, each at the path of the field it is about. A union that no branch
 * accepted says only "Invalid input" at the union's path; when exactly one branch is of the value's own type (the
 * array branch for an array), its issues say what is wrong, so those are reported, at their full paths.
 */
function namedIssues(issue: z.core.$ZodIssue): Array<{ path: PropertyKey[]; message: string }> {
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const sameType = issue.errors.filter(
      (branch) => !branch.some((inner) => inner.code === 'invalid_type' && inner.path.length === 0),
    );
    if (sameType.length === 1)
      return sameType[0].flatMap((inner) =>
        namedIssues({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue),
      );
  }
  return [{ path: issue.path, message: issue.message }];
}

function logOutcome(event: OperationEvent, statusCode: number): void {
  const startedAt = event.state?.startedAt;
  logger.info('request completed', {
    statusCode,
    durationMs: startedAt === undefined ? undefined : Date.now() - startedAt,
  });
}

/** Wraps what the handler returned in the success envelope. */
export function successEnvelope(): Middleware {
  return {
    after: (request) => {
      const output = request.response as OperationOutput;
      const { requestId } = state(request.event);
      request.response =
        'result' in output
          ? rawResultResponse(output.result, requestId)
          : successResponse(output.message, output.data, requestId, {
              nextPageToken: output.nextPageToken,
              pageToken: output.pageToken,
            });
      logOutcome(request.event, 200);
    },
  };
}

/**
 * The one error mapper. A ServiceError becomes its envelope and status; DynamoDB throttling becomes UNAVAILABLE;
 * anything else becomes INTERNAL with a fixed message, its cause logged with the request id, never returned.
 */
export function errorMapper(): Middleware {
  return {
    onError: (request) => {
      const { error, event } = request;
      const requestId = event.state?.requestId ?? request.context?.awsRequestId ?? randomUUID();
      if (error instanceof ServiceError) {
        // The answer the client asked for; nothing to log beyond the outcome.
      } else if (isBusy(error)) {
        logger.warn('storage throttled', { error: error?.name });
      } else {
        logger.error('unhandled error', error instanceof Error ? error : String(error));
      }
      const response = answerFor(error, requestId);
      request.response = response;
      logOutcome(event, response.statusCode);
    },
  };
}

/**
 * The answer to a failed request: a ServiceError becomes its envelope and status; DynamoDB throttling becomes
 * UNAVAILABLE; anything else becomes INTERNAL with a fixed message (its cause is logged by the mapper, never
 * returned).
 */
function answerFor(error: unknown, requestId: string): HttpResult {
  const answer = publicErrorOf(error);
  return errorResponse(answer.httpStatus, answer.code, answer.message, requestId, {
    details: answer.details,
    headers: answer.headers,
  });
}
