/**
 * The shared middleware stack (shared/http/middleware.ts) on requests whose outcome shows in the table: a request it
 * refuses writes nothing, one it accepts reaches the handler and storage. Its refusals that need no storage are in
 * test/unit/middleware.test.ts.
 */
import { handler as createWorkspace } from '../../functions/workspace/create';
import { getEmailRegistry } from '../../shared/db/workspace';
import { uniqueEmail } from '../support/ids';
import { invoke } from '../support/invoke';

const PATH = '/v2/workspace/create';
const raw = (rawBody: string, headers: Record<string, string> = {}) =>
  invoke(createWorkspace, PATH, undefined, { rawBody, headers });

describe('the shared middleware stack', () => {
  it('rejects a non-JSON content type', async () => {
    const email = uniqueEmail();

    const response = await raw(JSON.stringify({ data: { ownerEmail: email } }), { 'content-type': 'text/plain' });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.message).toBe('Content-Type must be application/json.');
    expect(await getEmailRegistry(email)).toBeUndefined();
  });

  it('accepts a JSON content type with a charset, whatever the header name case', async () => {
    const response = await invoke(
      createWorkspace,
      PATH,
      { ownerEmail: uniqueEmail() },
      {
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
      },
    );

    expect(response.statusCode).toBe(200);
  });

  it('refuses a body over 1 MiB with HTTP 413 and writes nothing', async () => {
    const email = uniqueEmail();
    const body = JSON.stringify({ data: { ownerEmail: email, name: 'x'.repeat(1024 * 1024) } });

    const response = await raw(body);

    expect(response.statusCode).toBe(413);
    expect(response.body.error).toEqual({
      status: 'INVALID_ARGUMENT',
      message: 'Request body exceeds the limit of 1 MiB (1048576 bytes).',
    });
    expect(await getEmailRegistry(email)).toBeUndefined();
  });

  it('puts x-request-id on success and error responses', async () => {
    const ok = await invoke(createWorkspace, PATH, { ownerEmail: uniqueEmail() });
    const bad = await raw('nope');

    expect(ok.headers['x-request-id']).toMatch(/[0-9a-f-]{36}/);
    expect(bad.headers['x-request-id']).toMatch(/[0-9a-f-]{36}/);
  });

  it('accepts a base64-encoded body as API Gateway may send it', async () => {
    const event = JSON.stringify({ data: { ownerEmail: uniqueEmail() } });

    // Bytes go base64-encoded with isBase64Encoded set (test/support/invoke.ts).
    const response = await invoke(createWorkspace, PATH, undefined, { rawBody: Buffer.from(event) });

    expect(response.statusCode).toBe(200);
  });
});
