/**
 * A local stand-in for API Gateway (HTTP API, payload format 2.0): turns each HTTP request into the event and
 * context Lambda would receive, calls the handler in-process, and writes its result back the way API Gateway does.
 * Handlers therefore run exactly the code path they run in AWS, middleware included.
 */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import {
  createServer,
  maxHeaderSize,
  STATUS_CODES,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { Duplex } from 'node:stream';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';
import { routeId } from '../shared/routes';

export type HttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyResultV2>;
export type NotRoutedHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

export interface GatewayOptions {
  /** The handler serving POST `path`, or undefined when no route has that path. */
  resolveHandler(path: string): HttpHandler | undefined;
  /** Answers everything that is not a POST to a known route (GET /openapi.json, 404 / 405 envelopes), like API Gateway's `$default`. */
  notRouted: NotRoutedHandler;
}

/** One byte over the handlers' 1 MiB limit: enough for them to see the body is too large and answer 413. */
export const BODY_CAP_BYTES = 1024 * 1024 + 1;
/** API Gateway's integration timeout for HTTP APIs. */
const TIMEOUT_MS = 30_000;
/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) is shorter than the idle time of common
 * client pools, which then reuse a connection the gateway is closing and get ECONNRESET. 65 s outlasts the usual
 * 60 s pools and proxies; clients that read the `Keep-Alive: timeout=65` header Node sends (fetch) close first.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/**
 * Above the keep-alive timeout, as Node requires: on a reused connection Node may count the idle time toward the
 * headers timeout (nodejs/node#27363), which would cut an idle connection before its keep-alive timeout.
 */
export const HEADERS_TIMEOUT_MS = KEEP_ALIVE_TIMEOUT_MS + 1_000;
const INTERNAL_ERROR_BODY = JSON.stringify({ error: { status: 'INTERNAL', message: 'Internal error.' } });

export function createGateway(options: GatewayOptions): Server {
  const inFlight = new WeakMap<Duplex, ServerResponse>();
  const server = createServer((request, response) => {
    inFlight.set(request.socket, response);
    serve(options, request, response).catch((error: unknown) => {
      // The client left before its request was complete (reset or closed mid-upload): nobody to answer.
      if (!request.complete) {
        response.destroy();
        return;
      }
      // Nothing may escape a request: the server keeps serving whatever one handler does.
      console.error('Gateway: request failed', error);
      writeInternalError(response);
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, inFlight.get(socket)),
  );
  return server;
}

/**
 * A request Node could not parse never reaches the handlers; Node's own answer is a bare status line. This one is
 * the API's error envelope, written on the raw socket, which is then closed (the connection is unusable: Node stops
 * parsing it). Nothing is written in the middle of a response on that connection: it would corrupt it.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, pending: ServerResponse | undefined): void {
  const midResponse = pending !== undefined && pending.headersSent && !pending.writableEnded;
  if (error.code === 'ECONNRESET' || !socket.writable || midResponse) {
    socket.destroy();
    return;
  }
  const { statusCode, status, message } = clientErrorAnswer(error.code);
  const body = JSON.stringify({ error: { status, message } });
  socket.end(
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode] ?? ''}\r\n` +
      'content-type: application/json\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}

interface ClientErrorAnswer {
  statusCode: number;
  status: 'INVALID_ARGUMENT';
  message: string;
}

/** The answer to a request Node rejected, by Node's error code (llhttp's HPE_* codes, or a timeout). */
export function clientErrorAnswer(code: string | undefined): ClientErrorAnswer {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        statusCode: 431,
        status: 'INVALID_ARGUMENT',
        message: `Request headers are too large (limit ${Math.round(maxHeaderSize / 1024)} KB).`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // Not malformed, only too slow (headersTimeout or requestTimeout): Node's own answer is 408 too.
      return { statusCode: 408, status: 'INVALID_ARGUMENT', message: 'The request was not received in time.' };
    default:
      return { statusCode: 400, status: 'INVALID_ARGUMENT', message: 'Malformed HTTP request.' };
  }
}

async function serve(options: GatewayOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = await readCappedBody(request, BODY_CAP_BYTES);
  const url = requestUrl(request);
  const method = request.method ?? 'GET';
  const requestId = randomUUID();

  try {
    // Loading the handler module is inside the try: a module that fails to load is a 500, like a failed cold start.
    const handler = method === 'POST' ? options.resolveHandler(url.pathname) : undefined;
    const routeKey = handler === undefined ? '$default' : `POST ${url.pathname}`;
    const event = buildEvent(request, url, body, routeKey, requestId);
    const context = buildContext(handler === undefined ? 'NotRouted' : routeId(url.pathname), requestId);
    const result = handler === undefined ? await options.notRouted(event, context) : await handler(event, context);
    writeResult(response, normalizeResult(result), requestId);
  } catch (error) {
    console.error(`Gateway: handler for ${method} ${url.pathname} threw`, error);
    writeInternalError(response, requestId);
  }
}

/** Origin-form targets are appended to a dummy origin, so `//x/y` stays a path instead of becoming host `x`. */
function requestUrl(request: IncomingMessage): URL {
  const target = request.url ?? '/';
  return new URL(target.startsWith('/') ? `http://localhost${target}` : target);
}

/**
 * Buffers at most `cap` bytes and drains the rest, so an oversized body still reaches the handler (as `cap`
 * bytes, over its limit) without the gateway holding the whole upload in memory.
 */
function readCappedBody(request: IncomingMessage, cap: number): Promise<Buffer> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      if (size >= cap) return;
      const kept = chunk.subarray(0, cap - size);
      chunks.push(kept);
      size += kept.length;
    });
    request.once('end', () => resolveBody(Buffer.concat(chunks)));
    request.once('error', reject);
    // A client that disconnects mid-upload never sends 'end'; without this the request would wait forever.
    request.once('close', () => {
      if (!request.complete) reject(new Error('The client closed the connection before the body ended.'));
    });
  });
}

function buildEvent(
  request: IncomingMessage,
  url: URL,
  body: Buffer,
  routeKey: string,
  requestId: string,
): APIGatewayProxyEventV2 {
  const headers = lowerCasedHeaders(request);
  const cookies = headers.cookie
    ?.split(';')
    .map((cookie) => cookie.trim())
    .filter(Boolean);
  // API Gateway moves cookies out of the headers into their own field.
  delete headers.cookie;
  const rawQueryString = url.search.replace(/^\?/, '');
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString,
    ...(cookies !== undefined && cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(rawQueryString === '' ? {} : { queryStringParameters: queryParameters(url.searchParams) }),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0],
      http: {
        method: request.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: sourceIp(request),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: accessLogTime(now),
      timeEpoch: now.getTime(),
    },
    // Like API Gateway, a body that is not text reaches the handler base64-encoded, byte for byte: decoding it as
    // UTF-8 here would silently replace invalid bytes that the handler must refuse.
    ...(isUtf8(body)
      ? { body: body.toString('utf8'), isBase64Encoded: false }
      : { body: body.toString('base64'), isBase64Encoded: true }),
  };
}

/** Header names lower-cased; repeated headers joined with commas, as API Gateway does. */
function lowerCasedHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(request.headersDistinct)) {
    if (values !== undefined) headers[name.toLowerCase()] = values.join(',');
  }
  return headers;
}

function queryParameters(params: URLSearchParams): Record<string, string> {
  const result: Record<string, string> = {};
  for (const key of new Set(params.keys())) result[key] = params.getAll(key).join(',');
  return result;
}

/** The client's address as API Gateway reports it: plain IPv4 rather than the IPv4-mapped IPv6 form. */
function sourceIp(request: IncomingMessage): string {
  const address = request.socket.remoteAddress ?? '127.0.0.1';
  return address.replace(/^::ffff:/, '');
}

/** `22/Nov/2025:02:30:00 +0000`, the format of `requestContext.time`. */
function accessLogTime(date: Date): string {
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n: number): string => String(n).padStart(2, '0');
  return (
    `${pad(date.getUTCDate())}/${months[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}

/** The Lambda context of one call: a 30 s deadline, as API Gateway gives its integrations. */
export function buildContext(functionName: string, requestId: string): Context {
  const deadline = Date.now() + TIMEOUT_MS;
  const unsupported = (): never => {
    throw new Error('Callback-style completion is not supported; return a value instead.');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

function isStructuredResult(result: APIGatewayProxyResultV2): result is APIGatewayProxyStructuredResultV2 {
  return typeof result === 'object' && result !== null && 'statusCode' in result;
}

/** Like API Gateway: a result without `statusCode` is a 200 JSON response whose body is that result. */
function normalizeResult(result: APIGatewayProxyResultV2): APIGatewayProxyStructuredResultV2 {
  if (isStructuredResult(result)) return result;
  const body = typeof result === 'string' ? result : JSON.stringify(result ?? null);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body };
}

function writeResult(response: ServerResponse, result: APIGatewayProxyStructuredResultV2, requestId: string): void {
  const headers: Record<string, string | string[]> = { 'apigw-requestid': requestId };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (result.cookies !== undefined && result.cookies.length > 0) headers['set-cookie'] = result.cookies;
  const body =
    result.body === undefined
      ? Buffer.alloc(0)
      : Buffer.from(result.body, result.isBase64Encoded === true ? 'base64' : 'utf8');
  headers['content-length'] = String(body.length);
  response.writeHead(result.statusCode ?? 200, headers);
  response.end(body);
}

function writeInternalError(response: ServerResponse, requestId?: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (requestId !== undefined) headers['apigw-requestid'] = requestId;
  response.writeHead(500, headers);
  response.end(INTERNAL_ERROR_BODY);
}
