/**
 * The local stack over HTTP, as started by the e2e global setup (`node --import tsx bin/local.ts --in-memory`): the gateway
 * answers what no route serves with the not-routed envelopes.
 */
const baseUrl = (): string => {
  const url = process.env.E2E_BASE_URL;
  if (url === undefined) throw new Error('E2E_BASE_URL is not set: the e2e global setup did not run.');
  return url;
};

interface ErrorEnvelope {
  error: { status: string; message: string };
}

function expectErrorEnvelope(body: unknown): void {
  const envelope = body as ErrorEnvelope;
  expect(typeof envelope.error.status).toBe('string');
  expect(typeof envelope.error.message).toBe('string');
}

describe('local stack', () => {
  it('printed its readiness line with a loopback address', () => {
    expect(baseUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers an unknown path with a 404 error envelope and a request id', async () => {
    const response = await fetch(`${baseUrl()}/v2/no/such/operation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const body: unknown = await response.json();
    expectErrorEnvelope(body);
    expect((body as ErrorEnvelope).error.status).toBe('NOT_FOUND');
  });

  it('answers GET on an operation path with 405 and Allow: POST', async () => {
    const response = await fetch(`${baseUrl()}/v2/workspace/create`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expectErrorEnvelope(await response.json());
  });

  it('hands an oversized body to the handler, which answers 413', async () => {
    // The gateway buffers at most 1 MiB + 1 byte; the handler's own size check must still see the body as too large.
    const response = await fetch(`${baseUrl()}/v2/workspace/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'a'.repeat(3 * 1024 * 1024),
    });
    expect(response.status).toBe(413);
    expectErrorEnvelope(await response.json());
  });
});
