/** A small client for the e2e tier: POSTs `{data}` to the local stack started by the e2e global setup. */
import { checkResponse } from './contract';
import { uniqueEmail } from './ids';

export function baseUrl(): string {
  const url = process.env.E2E_BASE_URL;
  if (url === undefined) throw new Error('E2E_BASE_URL is not set: the e2e global setup did not run.');
  return url;
}

export interface HttpReply {
  status: number;
  headers: Headers;
  body: any;
}

export async function post(
  path: string,
  data: unknown,
  headers: Record<string, string> = {},
  rawBody?: string | Buffer,
): Promise<HttpReply> {
  const response = await fetch(`${baseUrl()}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: rawBody ?? JSON.stringify({ data }),
  });
  const text = await response.text();
  const body = text ? JSON.parse(text) : undefined;
  checkResponse(path, response.status, body);
  return { status: response.status, headers: response.headers, body };
}

/** A new workspace over HTTP, and the headers of its first API key (key id + auth token). */
export async function newApiKeyHeaders(): Promise<Record<string, string>> {
  const created = await post('/v2/workspace/create', { ownerEmail: uniqueEmail('e2e') });
  const { id, authToken, apiKeyList } = created.body.result.data;
  const apiKey = Object.keys(apiKeyList)[0] as string;
  const tokens = await post(
    '/v2/workspace/authtokens/get',
    { apiKey },
    { 'x-service-workspace-id': id, 'x-service-workspace-auth-token': authToken },
  );
  return { 'x-service-api-key': apiKey, 'x-service-auth-token': tokens.body.result.data.authTokens[0].token };
}
