/** A small client for the e2e tier: POSTs `{data}` to the local stack started by the e2e global setup. */
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

export async function post(path: string, data: unknown, headers: Record<string, string> = {}, rawBody?: string): Promise<HttpReply> {
  const response = await fetch(`${baseUrl()}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: rawBody ?? JSON.stringify({ data }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}
