/**
 * Ask AI through the real middleware against DynamoDB Local and the fake AI providers of the global setup (the
 * official SDKs speak to it over HTTP): model routing, message layout, the tenant's decrypted key on the wire,
 * provider failures as `success: false`, tenancy, the key cache, validation, and no key in any output.
 */
import { randomUUID } from 'node:crypto';
import { handler as askAiHandler } from '../../functions/rewriter/ask-ai';
import { handler as updateKeys } from '../../functions/workspace/apikeyconfig-update';
import * as encryption from '../../shared/crypto/encryption';
import { captureOutput } from '../support/capture-output';
import { fakeAiProviders, type FakeBehaviour, type FakeProvider } from '../support/fake-ai-providers';
import { newTenant, siblingKey } from '../support/fixtures';
import { invoke, endpoint } from '../support/invoke';

const ASK = '/v2/rewriter/ask-ai';
const UPDATE = '/v2/workspace/apikeyconfig/update';
const fake = fakeAiProviders();

type Keys = Partial<Record<FakeProvider, string>>;

// Looks like a provider key; distinctive enough that finding it anywhere means it leaked.
const providerKey = (provider: FakeProvider) => `${provider}-${randomUUID()}-clear-ai-key`;

const ask = endpoint(askAiHandler, ASK);

async function setKeys(headers: Record<string, string>, keys: Keys): Promise<void> {
  const aiModelApiKey = Object.entries(keys).map(([provider, customerApiKey]) => ({ provider, customerApiKey }));
  const response = await invoke(updateKeys, UPDATE, { aiModelApiKey }, { headers });
  if (response.statusCode !== 200) throw new Error(`key update failed: ${JSON.stringify(response.body)}`);
}

/** A new tenant holding a fresh key for each named provider. */
async function tenantWithKeys(...providers: FakeProvider[]) {
  const tenant = await newTenant();
  const keys: Keys = Object.fromEntries(providers.map((provider) => [provider, providerKey(provider)]));
  await setKeys(tenant.apiKeyHeaders, keys);
  return { headers: tenant.apiKeyHeaders, keys, tenant };
}

const PROMPT = 'Rewrite the text in a friendly tone.';
const TEXT = 'The meeting moved to 3 pm.';

describe('ask-ai', () => {
  describe('model routing', () => {
    it.each([
      ['gpt-4o', 'openai', '/v1/chat/completions'],
      ['gpt-4.1-mini', 'openai', '/v1/chat/completions'],
      ['o1', 'openai', '/v1/chat/completions'],
      ['o3', 'openai', '/v1/chat/completions'],
      ['o4-mini', 'openai', '/v1/chat/completions'],
      ['o1-preview', 'openai', '/v1/chat/completions'],
      ['claude-3-5-sonnet-latest', 'anthropic', '/v1/messages'],
      ['gemini-2.0-flash', 'gemini', '/v1beta/models/gemini-2.0-flash:generateContent'],
    ] as const)('sends %s to %s with the decrypted key, and returns its answer', async (model, provider, path) => {
      const { headers, keys } = await tenantWithKeys('openai', 'anthropic', 'gemini');

      const response = await ask(headers, { model, prompt: PROMPT, text: TEXT });

      expect(response.statusCode).toBe(200);
      expect(response.body).toEqual({ result: { success: true, text: `fake ${provider} answer for ${model}` } });
      const received = await fake.requests(keys[provider] as string);
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ provider, path, credential: keys[provider] });
      for (const other of Object.keys(keys).filter((name) => name !== provider) as FakeProvider[]) {
        expect(await fake.requests(keys[other] as string)).toEqual([]);
      }
    });

    it.each([
      'o5',
      'gpt4',
      'claudex',
      '',
      'gpt-',
      'o3-',
      'GPT-4o',
      'claude',
      'gemini',
      'o1preview',
      'mistral-large',
      'gpt-4o/../x',
    ])('refuses the model %j with INVALID_ARGUMENT and calls no provider', async (model) => {
      const { headers, keys } = await tenantWithKeys('openai', 'anthropic', 'gemini');

      const response = await ask(headers, { model, prompt: PROMPT, text: TEXT });

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path)).toEqual(['data.model']);
      for (const key of Object.values(keys)) expect(await fake.requests(key)).toEqual([]);
    });
  });

  describe('messages', () => {
    it('gives OpenAI chat models the prompt as the system message and the text as the user message', async () => {
      const { headers, keys } = await tenantWithKeys('openai');

      await ask(headers, { model: 'gpt-4o-mini', prompt: PROMPT, text: TEXT });

      const [request] = await fake.requests(keys.openai as string);
      expect(request.body).toMatchObject({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: PROMPT },
          { role: 'user', content: TEXT },
        ],
      });
    });

    it.each(['o1', 'o3', 'o4-mini'])(
      'gives the reasoning model %s the prompt and the text in one user message',
      async (model) => {
        const { headers, keys } = await tenantWithKeys('openai');

        await ask(headers, { model, prompt: PROMPT, text: TEXT });

        const [request] = await fake.requests(keys.openai as string);
        expect((request.body as { messages: unknown }).messages).toEqual([
          { role: 'user', content: `${PROMPT}\n\n${TEXT}` },
        ]);
      },
    );

    it('gives Anthropic the prompt as the system parameter and the text as the only user message', async () => {
      const { headers, keys } = await tenantWithKeys('anthropic');

      await ask(headers, { model: 'claude-sonnet-4-6', prompt: PROMPT, text: TEXT });

      const [request] = await fake.requests(keys.anthropic as string);
      expect(request.body).toMatchObject({
        model: 'claude-sonnet-4-6',
        system: PROMPT,
        messages: [{ role: 'user', content: TEXT }],
      });
      expect((request.body as { max_tokens: number }).max_tokens).toBe(4096);
    });

    it('gives Gemini the prompt as the system instruction and the text as the user content', async () => {
      const { headers, keys } = await tenantWithKeys('gemini');

      await ask(headers, { model: 'gemini-2.5-flash', prompt: PROMPT, text: TEXT });

      const [request] = await fake.requests(keys.gemini as string);
      const body = request.body as {
        systemInstruction: { parts: Array<{ text: string }> };
        contents: Array<{ role: string; parts: Array<{ text: string }> }>;
      };
      expect(body.systemInstruction.parts).toEqual([{ text: PROMPT }]);
      expect(body.contents).toEqual([{ role: 'user', parts: [{ text: TEXT }] }]);
      expect(JSON.stringify(body.contents)).not.toContain(PROMPT);
    });
  });

  describe('without a key', () => {
    it.each([
      ['gpt-4o', 'OpenAI'],
      ['o3', 'OpenAI'],
      ['claude-3-haiku-20240307', 'Anthropic'],
      ['gemini-2.0-flash', 'Gemini'],
    ])('answers %s with success false: "No API key configured for provider: %s"', async (model, name) => {
      const tenant = await newTenant();

      const response = await ask(tenant.apiKeyHeaders, { model, prompt: PROMPT, text: TEXT });

      expect(response.statusCode).toBe(200);
      expect(response.body).toEqual({
        result: { success: false, error: `No API key configured for provider: ${name}` },
      });
    });

    it('uses only the key of the model’s provider: an OpenAI key does not serve a Claude model', async () => {
      const { headers, keys } = await tenantWithKeys('openai');

      const response = await ask(headers, { model: 'claude-3-5-haiku-latest', prompt: PROMPT, text: TEXT });

      expect(response.body.result).toEqual({ success: false, error: 'No API key configured for provider: Anthropic' });
      expect(await fake.requests(keys.openai as string)).toEqual([]);
    });
  });

  describe('provider failures', () => {
    const models: Record<FakeProvider, string> = {
      openai: 'gpt-4o',
      anthropic: 'claude-sonnet-4-6',
      gemini: 'gemini-2.0-flash',
    };
    const names: Record<FakeProvider, string> = { openai: 'OpenAI', anthropic: 'Anthropic', gemini: 'Gemini' };
    const cases: Array<[string, FakeProvider, (key: string) => FakeBehaviour, string]> = [];
    for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
      const name = names[provider];
      cases.push(
        [
          '401',
          provider,
          (key) => ({ status: 401, message: `Incorrect API key provided: ${key}` }),
          `${name} rejected the API key (401).`,
        ],
        [
          '429',
          provider,
          () => ({ status: 429, message: 'Rate limit reached.' }),
          `${name} rate limit or quota exceeded (429); try again later.`,
        ],
        [
          '500',
          provider,
          () => ({ status: 500, message: 'Upstream failure.' }),
          `${name} had a server error (500); try again later.`,
        ],
        ['a hang past the timeout', provider, () => ({ hang: true }), `${name} timed out after 2 s.`],
        ['a dropped connection', provider, () => ({ drop: true }), `Could not reach ${name} (network error).`],
      );
    }

    it.each(cases)(
      'reports %s from %s as success false with a clear message, without the key, after one attempt',
      async (_, provider, behaviour, message) => {
        const { headers, keys } = await tenantWithKeys(provider);
        const key = keys[provider] as string;
        await fake.script(key, behaviour(key));

        const response = await ask(headers, { model: models[provider], prompt: PROMPT, text: TEXT });

        expect(response.statusCode).toBe(200);
        expect(response.body).toEqual({ result: { success: false, error: message } });
        expect(JSON.stringify(response.body)).not.toContain(key);
        // No retries: one request, whatever the failure.
        expect(await fake.requests(key)).toHaveLength(1);
      },
    );

    it.each(['openai', 'anthropic', 'gemini'] as const)(
      'passes on the reason %s gives for refusing a request, with any echo of the key redacted',
      async (provider) => {
        const { headers, keys } = await tenantWithKeys(provider);
        const key = keys[provider] as string;
        await fake.script(key, { status: 404, message: `The model does not exist or key ${key} has no access to it.` });

        const response = await ask(headers, { model: models[provider], prompt: PROMPT, text: TEXT });

        expect(response.body.result).toEqual({
          success: false,
          error: `${names[provider]} refused the request (404): The model does not exist or key [redacted] has no access to it.`,
        });
      },
    );

    it('reports an answer without text as success false', async () => {
      const { headers, keys } = await tenantWithKeys('anthropic');
      await fake.script(keys.anthropic as string, { reply: '' });

      const response = await ask(headers, { model: 'claude-sonnet-4-6', prompt: PROMPT, text: TEXT });

      expect(response.body.result).toEqual({ success: false, error: 'Anthropic returned no text.' });
    });
  });

  describe('keys', () => {
    it('decrypts a key once and reuses it, yet uses a replaced key and honours a removal at once', async () => {
      const { headers, keys } = await tenantWithKeys('openai');
      const decrypt = jest.spyOn(encryption, 'decryptSecret');
      try {
        await ask(headers, { model: 'gpt-4o', prompt: PROMPT, text: TEXT });
        await ask(headers, { model: 'gpt-4o', prompt: PROMPT, text: TEXT });
        const decryptsForFirstKey = decrypt.mock.calls.length;
        const replacement = providerKey('openai');
        await setKeys(headers, { openai: replacement });
        const afterReplace = await ask(headers, { model: 'gpt-4o', prompt: PROMPT, text: TEXT });
        await setKeys(headers, { openai: '' });
        const afterRemoval = await ask(headers, { model: 'gpt-4o', prompt: PROMPT, text: TEXT });

        expect(decryptsForFirstKey).toBe(1);
        expect(decrypt).toHaveBeenCalledTimes(2);
        expect(await fake.requests(keys.openai as string)).toHaveLength(2);
        expect(afterReplace.body.result).toEqual({ success: true, text: 'fake openai answer for gpt-4o' });
        expect(await fake.requests(replacement)).toHaveLength(1);
        expect(afterRemoval.body.result).toEqual({
          success: false,
          error: 'No API key configured for provider: OpenAI',
        });
      } finally {
        decrypt.mockRestore();
      }
    });

    it('belong to their API key: a sibling key and another workspace have none of them', async () => {
      const { tenant, keys } = await tenantWithKeys('openai', 'anthropic', 'gemini');
      const sibling = await siblingKey(tenant);
      const stranger = await newTenant();

      const replies = await Promise.all(
        [sibling, stranger.apiKeyHeaders].flatMap((headers) => [
          ask(headers, { model: 'gpt-4o', prompt: PROMPT, text: TEXT }),
          ask(headers, { model: 'claude-sonnet-4-6', prompt: PROMPT, text: TEXT }),
          ask(headers, { model: 'gemini-2.0-flash', prompt: PROMPT, text: TEXT }),
        ]),
      );

      expect(replies.map((reply) => reply.body.result?.error)).toEqual(
        ['OpenAI', 'Anthropic', 'Gemini', 'OpenAI', 'Anthropic', 'Gemini'].map(
          (name) => `No API key configured for provider: ${name}`,
        ),
      );
      for (const key of Object.values(keys)) expect(await fake.requests(key)).toEqual([]);
    });

    it('never appear in the logs, even at DEBUG level, whatever the outcome', async () => {
      const tenant = await newTenant();
      const key = providerKey('openai');
      const output = await captureOutput(async () => {
        await setKeys(tenant.apiKeyHeaders, { openai: key });
        await ask(tenant.apiKeyHeaders, { model: 'gpt-4o', prompt: PROMPT, text: TEXT });
        await fake.script(key, { status: 400, message: `Bad request for key ${key}` });
        await ask(tenant.apiKeyHeaders, { model: 'gpt-4o', prompt: PROMPT, text: TEXT });
        await invoke(
          updateKeys,
          UPDATE,
          { aiModelApiKey: [{ provider: 'openai', customerApiKey: `${key} with spaces` }] },
          { headers: tenant.apiKeyHeaders },
        );
      });

      expect(output).toContain('AI key config updated');
      expect(output).toContain('ask-ai answered');
      expect(output).not.toContain(key);
      expect(output).not.toContain(PROMPT);
      expect(output).not.toContain(TEXT);
    });
  });

  describe('validation', () => {
    const valid = { model: 'gpt-4o', prompt: PROMPT, text: TEXT };

    it.each([
      ['no fields at all', {}, ['data.model', 'data.prompt', 'data.text']],
      ['no model', { prompt: PROMPT, text: TEXT }, ['data.model']],
      ['no prompt', { model: 'gpt-4o', text: TEXT }, ['data.prompt']],
      ['no text', { model: 'gpt-4o', prompt: PROMPT }, ['data.text']],
      ['a numeric model', { ...valid, model: 4 }, ['data.model']],
      ['a prompt that is an object', { ...valid, prompt: { text: PROMPT } }, ['data.prompt']],
      ['a text that is an array', { ...valid, text: [TEXT] }, ['data.text']],
      ['a blank prompt', { ...valid, prompt: '  \n ' }, ['data.prompt']],
      ['an empty text', { ...valid, text: '' }, ['data.text']],
      ['a model name over 100 characters', { ...valid, model: `gpt-${'4'.repeat(97)}` }, ['data.model']],
      ['a prompt over 10,000 characters', { ...valid, prompt: 'p'.repeat(10_001) }, ['data.prompt']],
      ['a text over 100,000 characters', { ...valid, text: 't'.repeat(100_001) }, ['data.text']],
    ])('refuses %s with INVALID_ARGUMENT naming each field, and calls no provider', async (_, data, paths) => {
      const { headers, keys } = await tenantWithKeys('openai');

      const response = await ask(headers, data);

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path)).toEqual(paths);
      expect(await fake.requests(keys.openai as string)).toEqual([]);
    });

    it('accepts a text of exactly 100,000 characters, counting an emoji as one', async () => {
      const { headers, keys } = await tenantWithKeys('openai');
      const text = '😀'.repeat(100_000);

      const response = await ask(headers, { ...valid, text });

      expect(response.body.result).toEqual({ success: true, text: 'fake openai answer for gpt-4o' });
      const [request] = await fake.requests(keys.openai as string);
      expect((request.body as { messages: Array<{ content: string }> }).messages[1].content).toBe(text);
    });
  });
});
