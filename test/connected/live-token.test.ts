/**
 * Live-sync session tokens (shared/db/live-token.ts) under the `live-token` server secret the table holds: what a
 * token names comes back unchanged, and a token altered, expired, made for something else, or signed with a value
 * the secret no longer holds is refused. The clock is passed in (`now`): nothing here waits.
 */
import { createLiveToken, readLiveToken, type LiveSession } from '../../shared/db/live-token';
import { createPageToken } from '../../shared/db/page-token';
import { LIVE_TOKEN_SECRET, readServerSecret, rotateServerSecret } from '../../shared/db/server-secret';

const HOUR = 60 * 60 * 1000;
/** Past the process's secret cache (shared/db/server-secret.ts, 5 minutes): a read sees the table's value. */
const PAST_CACHE = 6 * 60 * 1000;

const session = (expiresAt = Date.now() + HOUR): LiveSession => ({
  apiKeyId: 'key_0123456789abcdef0123456789abcdef',
  organizationId: 'acme',
  documentId: 'plan',
  editorId: 'body',
  userId: 'ann',
  expiresAt,
});

/** The reason a read refuses the token with, or `accepted`. */
async function refusal(token: string, now?: number): Promise<string> {
  try {
    await readLiveToken(token, now);
    return 'accepted';
  } catch (error) {
    return (error as { reason?: string }).reason ?? `other: ${String(error)}`;
  }
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
const decode = (body: string) => JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;

describe('live session tokens', () => {
  it('give back the session they were made for', async () => {
    const made = session();

    const token = await createLiveToken(made);

    expect(await readLiveToken(token)).toEqual(made);
  });

  it.each([
    ['another user', { u: 'mallory' }],
    ['another editor', { e: 'other' }],
    ['another API key', { k: 'key_fedcba9876543210fedcba9876543210' }],
    ['a later expiry', { x: Date.now() + 24 * HOUR }],
  ])('refuse a payload changed to name %s, kept with its signature', async (_, change) => {
    const [body, signature] = (await createLiveToken(session())).split('.');

    const forged = `${encode({ ...decode(body), ...change })}.${signature}`;

    expect(await refusal(forged)).toBe('invalid');
  });

  it('refuse a changed signature, a missing one, and tokens of other shapes', async () => {
    const token = await createLiveToken(session());
    const [body, signature] = token.split('.');
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;

    expect(await refusal(`${body}.${flipped}`)).toBe('invalid');
    expect(await refusal(`${body}.`)).toBe('invalid');
    expect(await refusal(body)).toBe('invalid');
    expect(await refusal(`${token}.extra`)).toBe('invalid');
    expect(await refusal('')).toBe('invalid');
    expect(await refusal(`${'a'.repeat(5000)}.${signature}`)).toBe('invalid');
  });

  it('refuse an expired token with the reason expired, from the moment it expires', async () => {
    const expiresAt = Date.now() + 60_000;
    const token = await createLiveToken(session(expiresAt));

    expect(await refusal(token, expiresAt - 1)).toBe('accepted');
    expect(await refusal(token, expiresAt)).toBe('expired');
    expect(await refusal(token, expiresAt + HOUR)).toBe('expired');
  });

  it('refuse a page token: it is signed with another secret for another purpose', async () => {
    const page = await createPageToken({ tenant: session().apiKeyId, query: { operation: 'x' } }, { after: 'a' });

    expect(await refusal(page)).toBe('invalid');
  });

  it('refuse a token signed with the live secret over a payload that is not a session', async () => {
    // What a valid signature over a foreign payload would look like: the signature is domain-separated, so even the
    // service's own HMAC of this body under the live secret without the prefix does not verify.
    const { createHmac } = await import('node:crypto');
    const body = encode({ k: 'key', o: 'o', d: 'd', e: 'e', u: 'u', x: Date.now() + HOUR });
    const secret = (await readServerSecret(LIVE_TOKEN_SECRET)).current;
    const unprefixed = createHmac('sha256', secret).update(body).digest('base64url');

    expect(await refusal(`${body}.${unprefixed}`)).toBe('invalid');
  });

  // Rotations last. Each test's clock starts later than any clock used before in this file (the expiry test read the
  // secret an hour ahead), so its first read of the secret reads the table.
  describe('across rotations of the live-token secret', () => {
    it('keep a token made before one rotation valid, and refuse it after a second', async () => {
      const start = Date.now() + 10 * HOUR;
      const token = await createLiveToken(session(start + 24 * HOUR));
      const signedWith = (await readServerSecret(LIVE_TOKEN_SECRET)).current;

      await rotateServerSecret(LIVE_TOKEN_SECRET);
      const afterOne = await refusal(token, start);
      await rotateServerSecret(LIVE_TOKEN_SECRET);
      const afterTwo = await refusal(token, start + PAST_CACHE);

      const rotated = await readServerSecret(LIVE_TOKEN_SECRET);
      expect(rotated.current.equals(signedWith) || rotated.previous?.equals(signedWith)).toBe(false);
      expect(afterOne).toBe('accepted');
      expect(afterTwo).toBe('invalid');
    });

    it('accept, right after a rotation, a token another process already signed with the new value', async () => {
      const start = Date.now() + 20 * HOUR;
      // This process read the secret before the rotation (its cache holds the old value)...
      await readLiveToken(await createLiveToken(session(start + 24 * HOUR)), start);
      await rotateServerSecret(LIVE_TOKEN_SECRET);
      // ...another instance (a fresh copy of the modules, its own cache) signs with the new one: the authorize
      // function and the connect handler are different functions in AWS.
      let token = '';
      await jest.isolateModulesAsync(async () => {
        const fresh = await import('../../shared/db/live-token');
        token = await fresh.createLiveToken(session(start + 24 * HOUR));
      });

      expect(await refusal(token, start)).toBe('accepted');
    });
  });
});
