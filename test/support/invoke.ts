/**
 * The one way tests call a handler: the way API Gateway does (HTTP API payload v2), through its real middleware
 * stack, under the grants of the route at the path it is called for (local/grant-check.ts). `invoke` is the
 * primitive; the rest are thin shapes of it: `invokeRoute` finds the handler through the route table (for suites
 * that drive many operations), `endpoint` binds a handler to its path (a test file's `add`, `get`, ...), and
 * `routeCaller` binds credentials for calls by path.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { runAsRoute, runWithGrants } from '../../local/grant-check';
import { checkResponse } from './contract';
import { WAIT_CEILING_MS } from './wait';
import type { Grants } from '../../shared/grants';
import type { HttpResult } from '../../shared/http/envelope';
import type { OperationHandler } from '../../shared/http/operation';
import { findRoute } from '../../shared/routes';

export interface InvokeOptions {
  headers?: Record<string, string>;
  /** Raw body; default is `JSON.stringify({ data })`. Bytes are sent base64-encoded, as API Gateway sends a body that is not text. */
  rawBody?: string | Buffer;
  sourceIp?: string;
  method?: string;
  /** Other grants than the route's, to make one step of the handler fail as a role without them would. */
  grants?: Grants;
  /** false: skip the contract check (test/support/contract.ts), for the test that shows it catches a wrong answer. */
  contract?: boolean;
}

export interface Invocation {
  statusCode: number;
  headers: Record<string, string>;
  body: {
    result?: {
      status: string;
      message: string;
      data?: any;
      nextPageToken?: string;
      pageToken?: string;
      [k: string]: unknown;
    };
    error?: { status: string; message: string; details?: any };
  };
}

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

function buildEvent(path: string, data: unknown, options: InvokeOptions = {}): APIGatewayProxyEventV2 {
  const requestId = randomUUID();
  const raw = options.rawBody ?? JSON.stringify({ data });
  const body = typeof raw === 'string' ? raw : raw.toString('base64');
  return {
    version: '2.0',
    routeKey: `POST ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', ...options.headers },
    body,
    isBase64Encoded: typeof raw !== 'string',
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: options.method ?? 'POST',
        path,
        protocol: 'HTTP/1.1',
        sourceIp: options.sourceIp ?? '127.0.0.1',
        userAgent: 'jest',
      },
      requestId,
      routeKey: `POST ${path}`,
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
  };
}

/**
 * The Lambda context of one call. Its remaining time counts down from the tests' wait ceiling, not from a Lambda
 * timeout: middy ends a call that outlives the remaining time with INTERNAL, and a test that sends 200 calls at
 * once runs them in one process (Lambda never does), where on a busy machine the last of them waited more than 30 s
 * for a socket and were ended half-way.
 */
function contextOfCall(): Context {
  const deadline = Date.now() + WAIT_CEILING_MS;
  return {
    awsRequestId: 'test',
    functionName: 'test',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  } as unknown as Context;
}

/** Invokes `handler` as the route at `path` with `{data}` as the body. */
export async function invoke(
  handler: Handler,
  path: string,
  data: unknown,
  options: InvokeOptions = {},
): Promise<Invocation> {
  const call = () => handler(buildEvent(path, data, options), contextOfCall());
  const response = await (options.grants === undefined
    ? runAsRoute(path, call)
    : runWithGrants(`POST ${path}`, options.grants, call));
  const body = JSON.parse(response.body ?? '{}');
  if (options.contract !== false) checkResponse(path, response.statusCode, body);
  return { statusCode: response.statusCode, headers: response.headers, body };
}

const root = join(__dirname, '..', '..');

/** The handler of the route at `path`, loaded from the entry file the route table names. Throws for a path with no route. */
export function routeHandler(path: string): OperationHandler {
  const route = findRoute(path);
  if (route === undefined) throw new Error(`No route ${path}.`);
  return (require(join(root, route.entry)) as { handler: OperationHandler }).handler;
}

/** Invokes the handler the route table names for `path`, as `invoke` does. */
export function invokeRoute(path: string, data: unknown, options: InvokeOptions = {}): Promise<Invocation> {
  return invoke(routeHandler(path), path, data, options);
}

/** Whose credentials a call carries: the headers themselves, or a tenant's (test/support/fixtures.ts) API-key headers. */
export type Credentials = Record<string, string> | { readonly apiKeyHeaders: Record<string, string> };

const isTenant = (who: Credentials): who is { readonly apiKeyHeaders: Record<string, string> } =>
  typeof who.apiKeyHeaders === 'object';

function headersOf(who: Credentials): Record<string, string> {
  return isTenant(who) ? who.apiKeyHeaders : who;
}

/** `handler` bound to `path`: called with credentials and `data`, as `invoke` calls it. */
export function endpoint(handler: Handler, path: string): (who: Credentials, data: unknown) => Promise<Invocation> {
  return (who, data) => invoke(handler, path, data, { headers: headersOf(who) });
}

/**
 * Calls by path (`invokeRoute`) with the credentials `who()` returns at call time (a tenant made in `beforeAll`,
 * say), or with the credentials passed as the third argument. Fits test/support/document-seed.ts's `Call`.
 */
export function routeCaller(
  who: () => Credentials,
): (path: string, data: unknown, as?: Credentials) => Promise<Invocation> {
  return (path, data, as = who()) => invokeRoute(path, data, { headers: headersOf(as) });
}
