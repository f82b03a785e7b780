import { createPageToken, readPageToken } from '../../shared/crypto/page-token';

const scope = { tenant: 'key_a', query: { operation: 'x', filter: ['b', 'a'], organizationId: 'o' } };

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    return (error as { code?: string }).code ?? 'other';
  }
}

describe('page tokens', () => {
  it('round-trips the cursor for the same tenant and query, whatever the field order', async () => {
    const token = await createPageToken(scope, { pk: 'p', sk: 's' });

    const cursor = await readPageToken(token, { tenant: 'key_a', query: { organizationId: 'o', filter: ['b', 'a'], operation: 'x' } });

    expect(cursor).toEqual({ pk: 'p', sk: 's' });
  });

  it('rejects a token of another tenant', async () => {
    const token = await createPageToken(scope, { after: 1 });

    expect(await rejection(readPageToken(token, { ...scope, tenant: 'key_b' }))).toBe('INVALID_ARGUMENT');
  });

  it('rejects a token of another query', async () => {
    const token = await createPageToken(scope, { after: 1 });

    expect(await rejection(readPageToken(token, { ...scope, query: { ...scope.query, organizationId: 'p' } }))).toBe('INVALID_ARGUMENT');
  });

  it('rejects an expired token', async () => {
    const token = await createPageToken(scope, { after: 1 }, Date.now() - 25 * 60 * 60 * 1000);

    expect(await rejection(readPageToken(token, scope))).toBe('INVALID_ARGUMENT');
  });

  it('rejects a token whose payload was changed, even with the old signature', async () => {
    const token = await createPageToken(scope, { after: 1 });
    const [body, signature] = token.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    payload.c.after = 999;
    const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;

    expect(await rejection(readPageToken(forged, scope))).toBe('INVALID_ARGUMENT');
  });

  it.each(['', 'abc', 'a.b.c', '..', 'x'.repeat(100)])('rejects the malformed token %p', async (token) => {
    expect(await rejection(readPageToken(token, scope))).toBe('INVALID_ARGUMENT');
  });
});

describe('the page-token secret', () => {
  it('is created once and shared by concurrent first users', async () => {
    const { getOrCreateServerSecret } = await import('../../shared/db/server-secret');

    const secrets = await Promise.all(Array.from({ length: 8 }, () => getOrCreateServerSecret('concurrency-check')));

    expect(new Set(secrets.map((secret) => secret.toString('base64'))).size).toBe(1);
    expect(secrets[0]).toHaveLength(32);
  });
});
