/**
 * The AI provider key configuration (apikeyconfig update / get) through the real middleware against DynamoDB
 * Local: masking, encryption at rest bound to tenant and provider, per-provider merge, validation, tenancy.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler as getKeys } from '../../functions/workspace/apikeyconfig-get';
import { handler as updateKeys } from '../../functions/workspace/apikeyconfig-update';
import { decryptSecret } from '../../shared/crypto/encryption';
import { getAiKeyConfig } from '../../shared/db/ai-key-config';
import { TABLE_NAME, db } from '../../shared/db/client';
import { tenantKey } from '../../shared/db/keys';
import { aiKeyContext } from '../../shared/domain/ai-key-config';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { invoke } from '../support/invoke';

const UPDATE = '/v2/workspace/apikeyconfig/update';
const GET = '/v2/workspace/apikeyconfig/get';

const update = (headers: Record<string, string>, aiModelApiKey: unknown) =>
  invoke(updateKeys, UPDATE, { aiModelApiKey }, { headers });
const read = (headers: Record<string, string>) => invoke(getKeys, GET, {}, { headers });
const rawItem = async (tenant: Tenant) =>
  (
    await db.send(
      new GetCommand({ TableName: TABLE_NAME, Key: { pk: tenantKey(tenant.apiKeyId), sk: 'CONFIG#AI_KEYS' } }),
    )
  ).Item;

// Looks like a provider key; distinctive enough that finding it anywhere means it leaked.
const providerKey = (label: string) => `sk-${label}-${randomUUID()}-clear-ai-key`;
const masked = (key: string) => `${'*'.repeat(key.length - 4)}${key.slice(-4)}`;

describe('AI key config', () => {
  it('reads an empty list when never set', async () => {
    const tenant = await newTenant();

    const response = await read(tenant.apiKeyHeaders);

    expect(response.statusCode).toBe(200);
    expect(response.body.result).toEqual({
      status: 'success',
      message: 'AI model API key config retrieved successfully.',
      data: { aiModelApiKey: [] },
    });
  });

  it('shows every stored key masked (last four visible) in update and get, never in clear', async () => {
    const tenant = await newTenant();
    const openai = providerKey('openai');
    const gemini = providerKey('gemini');

    const updated = await update(tenant.apiKeyHeaders, [
      { provider: 'gemini', customerApiKey: gemini },
      { provider: 'openai', customerApiKey: openai },
    ]);
    const fetched = await read(tenant.apiKeyHeaders);

    const expected = {
      aiModelApiKey: [
        { provider: 'openai', customerApiKey: masked(openai) },
        { provider: 'gemini', customerApiKey: masked(gemini) },
      ],
    };
    expect(updated.statusCode).toBe(200);
    expect(updated.body.result?.data).toEqual(expected);
    expect(fetched.body.result?.data).toEqual(expected);
    for (const reply of [updated, fetched]) {
      expect(JSON.stringify(reply.body)).not.toContain(openai);
      expect(JSON.stringify(reply.body)).not.toContain(gemini);
    }
  });

  it('stores each key only as ciphertext bound to its tenant and provider', async () => {
    const tenant = await newTenant();
    const key = providerKey('anthropic');

    await update(tenant.apiKeyHeaders, [{ provider: 'anthropic', customerApiKey: key }]);

    const item = await rawItem(tenant);
    expect(item).toBeDefined();
    expect(JSON.stringify(item)).not.toContain(key);
    const { ciphertext } = item?.config.keys.anthropic;
    expect(await decryptSecret(ciphertext, aiKeyContext(tenant.apiKeyId, 'anthropic'))).toBe(key);
    await expect(decryptSecret(ciphertext, aiKeyContext(tenant.apiKeyId, 'openai'))).rejects.toThrow();
    await expect(decryptSecret(ciphertext, aiKeyContext('another-api-key', 'anthropic'))).rejects.toThrow();
  });

  it('merges per provider: unnamed providers keep their keys, a new key replaces, the masked form keeps, "" removes', async () => {
    const tenant = await newTenant();
    const first = { openai: providerKey('openai'), anthropic: providerKey('anthropic') };
    await update(tenant.apiKeyHeaders, [
      { provider: 'openai', customerApiKey: first.openai },
      { provider: 'anthropic', customerApiKey: first.anthropic },
    ]);
    const before = (await rawItem(tenant))?.config.keys;
    const gemini = providerKey('gemini');
    const newOpenai = `${providerKey('openai')}WXYZ`;

    const added = await update(tenant.apiKeyHeaders, [{ provider: 'gemini', customerApiKey: gemini }]);
    const saved = await update(tenant.apiKeyHeaders, added.body.result?.data.aiModelApiKey);
    const afterSave = (await rawItem(tenant))?.config.keys;
    const replaced = await update(tenant.apiKeyHeaders, [{ provider: 'openai', customerApiKey: newOpenai }]);
    const removed = await update(tenant.apiKeyHeaders, [{ provider: 'anthropic', customerApiKey: '' }]);

    expect(added.body.result?.data.aiModelApiKey.map((entry: { provider: string }) => entry.provider)).toEqual([
      'openai',
      'anthropic',
      'gemini',
    ]);
    expect(saved.body.result?.data).toEqual(added.body.result?.data);
    expect(afterSave.openai).toEqual(before.openai);
    expect(afterSave.anthropic).toEqual(before.anthropic);
    expect(replaced.body.result?.data.aiModelApiKey[0]).toEqual({
      provider: 'openai',
      customerApiKey: masked(newOpenai),
    });
    expect(
      await decryptSecret(
        (await rawItem(tenant))?.config.keys.openai.ciphertext,
        aiKeyContext(tenant.apiKeyId, 'openai'),
      ),
    ).toBe(newOpenai);
    expect(removed.body.result?.data).toEqual({
      aiModelApiKey: [
        { provider: 'openai', customerApiKey: masked(newOpenai) },
        { provider: 'gemini', customerApiKey: masked(gemini) },
      ],
    });
    expect((await rawItem(tenant))?.config.keys).not.toHaveProperty('anthropic');
    expect((await read(tenant.apiKeyHeaders)).body.result?.data).toEqual(removed.body.result?.data);
  });

  it('drops whitespace around a pasted key', async () => {
    const tenant = await newTenant();
    const key = providerKey('openai');

    await update(tenant.apiKeyHeaders, [{ provider: 'openai', customerApiKey: `  ${key}\n` }]);

    expect(
      await decryptSecret(
        (await rawItem(tenant))?.config.keys.openai.ciphertext,
        aiKeyContext(tenant.apiKeyId, 'openai'),
      ),
    ).toBe(key);
  });

  it('removing a key that was never set stores an empty configuration', async () => {
    const tenant = await newTenant();

    const response = await update(tenant.apiKeyHeaders, [{ provider: 'gemini', customerApiKey: '' }]);

    expect(response.body.result?.data).toEqual({ aiModelApiKey: [] });
  });

  it('merges concurrent updates of different providers without losing one', async () => {
    const tenant = await newTenant();
    const keys = { openai: providerKey('openai'), anthropic: providerKey('anthropic'), gemini: providerKey('gemini') };

    const replies = await Promise.all(
      Object.entries(keys).map(([provider, customerApiKey]) =>
        update(tenant.apiKeyHeaders, [{ provider, customerApiKey }]),
      ),
    );

    expect(replies.map((reply) => reply.statusCode)).toEqual([200, 200, 200]);
    expect((await read(tenant.apiKeyHeaders)).body.result?.data.aiModelApiKey).toEqual(
      Object.entries(keys).map(([provider, key]) => ({ provider, customerApiKey: masked(key) })),
    );
  });

  it('applies 200 concurrent updates: every one succeeds, each provider keeps one of the keys sent for it', async () => {
    const tenant = await newTenant();
    const providers = ['openai', 'anthropic', 'gemini'] as const;
    const sent = Array.from({ length: 200 }, (_, i) => ({
      provider: providers[i % 3],
      customerApiKey: providerKey(`${providers[i % 3]}${i}`),
    }));

    const replies = await Promise.all(sent.map((entry) => update(tenant.apiKeyHeaders, [entry])));

    expect(replies.filter((reply) => reply.statusCode !== 200).map((reply) => reply.body.error)).toEqual([]);
    const keys = (await rawItem(tenant))?.config.keys;
    for (const provider of providers) {
      const stored = await decryptSecret(keys[provider].ciphertext, aiKeyContext(tenant.apiKeyId, provider));
      expect(sent.filter((entry) => entry.provider === provider).map((entry) => entry.customerApiKey)).toContain(
        stored,
      );
      expect(keys[provider].masked).toBe(masked(stored));
    }
  });

  it("refuses a key's old masked form after the key was removed, and one that is not the stored key's mask", async () => {
    const tenant = await newTenant();
    const set = await update(tenant.apiKeyHeaders, [
      { provider: 'openai', customerApiKey: providerKey('openai') },
      { provider: 'gemini', customerApiKey: providerKey('gemini') },
    ]);
    const [openaiMask, geminiMask] = set.body.result?.data.aiModelApiKey.map(
      (entry: { customerApiKey: string }) => entry.customerApiKey,
    );
    await update(tenant.apiKeyHeaders, [{ provider: 'openai', customerApiKey: '' }]);
    const before = (await rawItem(tenant))?.config;

    const resent = await update(tenant.apiKeyHeaders, [
      { provider: 'gemini', customerApiKey: geminiMask },
      { provider: 'openai', customerApiKey: openaiMask },
    ]);
    const mismatched = await update(tenant.apiKeyHeaders, [
      { provider: 'gemini', customerApiKey: `${'*'.repeat(20)}zzzz` },
    ]);

    expect(resent.statusCode).toBe(400);
    expect(resent.body.error?.details.issues).toEqual([
      {
        path: 'data.aiModelApiKey.1.customerApiKey',
        message: 'Is a masked key, but no key is stored to keep: send the key itself.',
      },
    ]);
    expect(mismatched.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(mismatched.body.error?.details.issues[0].path).toBe('data.aiModelApiKey.0.customerApiKey');
    expect((await rawItem(tenant))?.config).toEqual(before);
    expect(before?.keys).not.toHaveProperty('openai');
  });

  const key = 'sk-valid-provider-key-123';
  it.each([
    ['no aiModelApiKey', undefined],
    ['an aiModelApiKey that is not a list', { provider: 'openai', customerApiKey: key }],
    ['an empty list', []],
    [
      'more than three entries',
      ['openai', 'anthropic', 'gemini', 'openai'].map((provider) => ({ provider, customerApiKey: key })),
    ],
    [
      'a provider named twice',
      [
        { provider: 'openai', customerApiKey: key },
        { provider: 'openai', customerApiKey: '' },
      ],
    ],
    ['an unknown provider', [{ provider: 'mistral', customerApiKey: key }]],
    ['a provider in another case', [{ provider: 'OpenAI', customerApiKey: key }]],
    ['an entry without provider', [{ customerApiKey: key }]],
    ['an entry without customerApiKey', [{ provider: 'openai' }]],
    ['a numeric customerApiKey', [{ provider: 'openai', customerApiKey: 12345678 }]],
    ['a customerApiKey over 1024 characters', [{ provider: 'openai', customerApiKey: 'k'.repeat(1025) }]],
    ['a customerApiKey under 8 characters', [{ provider: 'openai', customerApiKey: 'sk-1234' }]],
    ['a customerApiKey with a space inside', [{ provider: 'openai', customerApiKey: 'sk-valid key-123' }]],
    ['an entry that is a string', ['openai']],
  ])('rejects %s with INVALID_ARGUMENT and stores nothing', async (_, aiModelApiKey) => {
    const tenant = await newTenant();

    const response = await update(tenant.apiKeyHeaders, aiModelApiKey);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(response.body.error?.details.issues.length).toBeGreaterThan(0);
    expect(
      response.body.error?.details.issues.every((issue: { path: string }) =>
        issue.path.startsWith('data.aiModelApiKey'),
      ),
    ).toBe(true);
    expect(await getAiKeyConfig(tenant.apiKeyId)).toBeUndefined();
  });

  it('never echoes a refused key in the error', async () => {
    const tenant = await newTenant();
    const refused = `${providerKey('openai')} with spaces`;

    const response = await update(tenant.apiKeyHeaders, [{ provider: 'openai', customerApiKey: refused }]);

    expect(response.statusCode).toBe(400);
    expect(JSON.stringify(response.body)).not.toContain(refused.slice(0, 20));
  });

  it('belongs to its API key: a sibling key and another workspace read nothing and cannot change it', async () => {
    const tenant = await newTenant();
    const stranger = await newTenant();
    const sibling = await siblingKey(tenant);
    const own = (await update(tenant.apiKeyHeaders, [{ provider: 'openai', customerApiKey: providerKey('openai') }]))
      .body.result?.data;

    const siblingRead = await read(sibling);
    const strangerRead = await read(stranger.apiKeyHeaders);
    const siblingUpdate = await update(sibling, [{ provider: 'openai', customerApiKey: '' }]);
    const strangerUpdate = await update(stranger.apiKeyHeaders, [
      { provider: 'gemini', customerApiKey: providerKey('gemini') },
    ]);

    expect(siblingRead.body.result?.data).toEqual({ aiModelApiKey: [] });
    expect(strangerRead.body.result?.data).toEqual({ aiModelApiKey: [] });
    expect(siblingUpdate.body.result?.data).toEqual({ aiModelApiKey: [] });
    expect(strangerUpdate.body.result?.data.aiModelApiKey.map((entry: { provider: string }) => entry.provider)).toEqual(
      ['gemini'],
    );
    expect((await read(tenant.apiKeyHeaders)).body.result?.data).toEqual(own);
  });
});
