import { cachedDecrypt } from '../../shared/crypto/encryption';

const context = { purpose: 'webhook-endpoint-secret', apiKeyId: 'key_a', endpointId: 'ep_1' };

function fakeDecrypt() {
  const calls: string[] = [];
  const decrypt = async (ciphertext: string, ctx: Record<string, string>) => {
    calls.push(ciphertext);
    if (ctx.apiKeyId !== 'key_a') throw new Error('Encryption context mismatch on "apiKeyId".');
    return `plain:${ciphertext}`;
  };
  return { calls, decrypt };
}

describe('cachedDecrypt', () => {
  it('decrypts a ciphertext once and answers the same plaintext from memory after that', async () => {
    const { calls, decrypt } = fakeDecrypt();
    const cached = cachedDecrypt({ maxEntries: 10, maxAgeMs: 60_000, decrypt });
    expect(await cached('c1', context)).toBe('plain:c1');
    expect(await cached('c1', { ...context })).toBe('plain:c1');
    expect(calls).toEqual(['c1']);
  });

  it('shares one decryption between concurrent callers', async () => {
    const { calls, decrypt } = fakeDecrypt();
    const cached = cachedDecrypt({ maxEntries: 10, maxAgeMs: 60_000, decrypt });
    expect(await Promise.all([cached('c1', context), cached('c1', context), cached('c1', context)])).toEqual([
      'plain:c1',
      'plain:c1',
      'plain:c1',
    ]);
    expect(calls).toEqual(['c1']);
  });

  it('keys entries by context too: the same ciphertext under another context is decrypted (and refused) again', async () => {
    const { calls, decrypt } = fakeDecrypt();
    const cached = cachedDecrypt({ maxEntries: 10, maxAgeMs: 60_000, decrypt });
    await cached('c1', context);
    await expect(cached('c1', { ...context, apiKeyId: 'key_b' })).rejects.toThrow('context mismatch');
    // A refusal is not remembered as an answer.
    await expect(cached('c1', { ...context, apiKeyId: 'key_b' })).rejects.toThrow('context mismatch');
    expect(calls).toEqual(['c1', 'c1', 'c1']);
  });

  it('decrypts again once an entry is older than maxAgeMs', async () => {
    const { calls, decrypt } = fakeDecrypt();
    let now = 1_000;
    const cached = cachedDecrypt({ maxEntries: 10, maxAgeMs: 5_000, decrypt, now: () => now });
    await cached('c1', context);
    now += 4_999;
    await cached('c1', context);
    now += 1;
    await cached('c1', context);
    expect(calls).toEqual(['c1', 'c1']);
  });

  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const { calls, decrypt } = fakeDecrypt();
    const cached = cachedDecrypt({ maxEntries: 2, maxAgeMs: 60_000, decrypt });
    await cached('c1', context);
    await cached('c2', context);
    await cached('c1', context); // c1 is now the most recently used
    await cached('c3', context); // drops c2
    await cached('c1', context);
    await cached('c2', context);
    expect(calls).toEqual(['c1', 'c2', 'c3', 'c2']);
  });
});
