/**
 * Calls a handler the way API Gateway does (HTTP API payload v2), through its real middleware stack, under the
 * grants of the route at the path it is called for (bin/lib/grant-check.ts).
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { runAsRoute, runWithGrants } from '../../bin/lib/grant-check';
import type { Grants } from '../../shared/grants';
import type { HttpResult } from '../../shared/http/envelope';

export interface InvokeOptions {
  headers?: Record<string, string>;
  /** Raw body; default is `JSON.stringify({ data })`. Bytes are sent base64-encoded, as API Gateway sends a body that is not text. */
  rawBody?: string | Buffer;
  sourceIp?: string;
  method?: string;
  /** Other grants than the route's, to make one step of the handler fail as a role without them would. */
  grants?: Grants;
}

export interface Invocation {
  statusCode: number;
  headers: Record<string, string>;
  body: {
    result?: { status: string; message: string; data?: any; nextPageToken?: string; pageToken?: string; [k: string]: unknown };
    error?: { status: string; message: string; details?: any };
  };
}

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>;

export function buildEvent(path: string, data: unknown, options: InvokeOptions = {}): APIGatewayProxyEventV2 {
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
      http: { method: options.method ?? 'POST', path, protocol: 'HTTP/1.1', sourceIp: options.sourceIp ?? '127.0.0.1', userAgent: 'jest' },
      requestId,
      routeKey: `POST ${path}`,
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
  };
}

const context = { awsRequestId: 'test', functionName: 'test', getRemainingTimeInMillis: () => 30000 } as unknown as Context;

/** Invokes `handler` as the route at `path` with `{data}` as the body. */
export async function invoke(handler: Handler, path: string, data: unknown, options: InvokeOptions = {}): Promise<Invocation> {
  const call = () => handler(buildEvent(path, data, options), context);
  const response = await (options.grants === undefined ? runAsRoute(path, call) : runWithGrants(`POST ${path}`, options.grants, call));
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: JSON.parse(response.body ?? '{}'),
  };
}
