/**
 * Page tokens signed under the server secret the table holds (shared/db/page-token.ts,
 * shared/db/server-secret.ts). Tokens refused before the secret is read are in test/unit/page-token.test.ts.
 */
import { createPageToken, readPageToken } from '../../shared/db/page-token';
import {
  PAGE_TOKEN_SECRET,
  ensureServerSecret,
  readServerSecret,
  rotateServerSecret,
} from '../../shared/db/server-secret';
import { rejection } from '../support/rejection';

const scope = { tenant: 'key_a', query: { operation: 'x', filter: ['b', 'a'], organizationId: 'o' } };

describe('page tokens', () => {
  it('round-trips the cursor for the same tenant and query, whatever the field order', async () => {
    const token = await createPageToken(scope, { pk: 'p', sk: 's' });

    const cursor = await readPageToken(token, {
      tenant: 'key_a',
      query: { organizationId: 'o', filter: ['b', 'a'], operation: 'x' },
    });

    expect(cursor).toEqual({ pk: 'p', sk: 's' });
  });

  it('rejects a token of another tenant', async () => {
    const token = await createPageToken(scope, { after: 1 });

    expect(await rejection(readPageToken(token, { ...scope, tenant: 'key_b' }))).toBe('INVALID_ARGUMENT');
  });

  it('rejects a token of another query', async () => {
    const token = await createPageToken(scope, { after: 1 });

    expect(await rejection(readPageToken(token, { ...scope, query: { ...scope.query, organizationId: 'p' } }))).toBe(
      'INVALID_ARGUMENT',
    );
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
});

describe('the page-token secret', () => {
  it('is created once when concurrent deploy runs race, and an existing one is left as it is', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => ensureServerSecret('concurrency-check')));
    const first = await readServerSecret('concurrency-check');

    const again = await ensureServerSecret('concurrency-check');

    expect(results.filter(Boolean)).toHaveLength(1);
    expect(again).toBe(false);
    expect((await readServerSecret('concurrency-check')).current.equals(first.current)).toBe(true);
    expect(first.current).toHaveLength(32);
  });

  it('is not created by reading it: a missing secret is an error that says how to create it', async () => {
    await expect(readServerSecret('never-deployed')).rejects.toThrow(/does not exist.*rotate-page-token-key/);
    await expect(readServerSecret('never-deployed')).rejects.toThrow(/does not exist/);
  });

  it('keeps tokens issued before a rotation valid, and signs new ones with the new value', async () => {
    const before = await createPageToken(scope, { after: 1 });
    const signedWith = (await readServerSecret(PAGE_TOKEN_SECRET)).current;

    await rotateServerSecret(PAGE_TOKEN_SECRET);
    const later = Date.now() + 6 * 60 * 1000; // past the process's secret cache
    const after = await createPageToken(scope, { after: 2 }, later);
    const rotated = await readServerSecret(PAGE_TOKEN_SECRET);

    expect(rotated.previous?.equals(signedWith)).toBe(true);
    expect(rotated.current.equals(signedWith)).toBe(false);
    expect(await readPageToken(before, scope, later)).toEqual({ after: 1 });
    expect(await readPageToken(after, scope, later)).toEqual({ after: 2 });
  });

  it('rejects tokens of the value dropped by a second rotation', async () => {
    const old = await createPageToken(scope, { after: 1 }, Date.now() + 20 * 60 * 1000);

    await rotateServerSecret(PAGE_TOKEN_SECRET);
    await rotateServerSecret(PAGE_TOKEN_SECRET);
    const later = Date.now() + 30 * 60 * 1000;

    expect(await rejection(readPageToken(old, scope, later))).toBe('INVALID_ARGUMENT');
  });
});
