/**
 * Ask AI over HTTP against the local stack, whose AI base URLs point at the fake providers of the e2e global
 * setup: keys set and read masked, an answer through the provider's SDK with the tenant's key on the wire, the
 * missing-key result, a provider refusal, an unknown model, and another tenant without the keys.
 */
import { randomUUID } from 'node:crypto';
import { fakeAiProviders } from '../support/fake-ai-providers';
import { newApiKeyHeaders, post } from '../support/http';

describe('Ask AI over HTTP', () => {
  it('answers with the tenant’s own provider key, reports provider trouble in the result, and keeps tenants apart', async () => {
    const fake = fakeAiProviders('E2E_FAKE_AI_PROVIDERS_URL');
    const headers = await newApiKeyHeaders();
    const other = await newApiKeyHeaders();
    const openai = `sk-e2e-${randomUUID()}`;
    const anthropic = `sk-ant-e2e-${randomUUID()}`;
    await fake.script(anthropic, { status: 429, message: 'Slow down.' });

    const updated = await post(
      '/v2/workspace/apikeyconfig/update',
      {
        aiModelApiKey: [
          { provider: 'openai', customerApiKey: openai },
          { provider: 'anthropic', customerApiKey: anthropic },
        ],
      },
      headers,
    );
    const fetched = await post('/v2/workspace/apikeyconfig/get', {}, headers);
    const answered = await post(
      '/v2/rewriter/ask-ai',
      { model: 'gpt-4o', prompt: 'Shorten it.', text: 'A rather long sentence.' },
      headers,
    );
    const limited = await post(
      '/v2/rewriter/ask-ai',
      { model: 'claude-sonnet-4-6', prompt: 'Shorten it.', text: 'Text.' },
      headers,
    );
    const noKey = await post(
      '/v2/rewriter/ask-ai',
      { model: 'gemini-2.0-flash', prompt: 'Shorten it.', text: 'Text.' },
      headers,
    );
    const unknownModel = await post(
      '/v2/rewriter/ask-ai',
      { model: 'gpt4', prompt: 'Shorten it.', text: 'Text.' },
      headers,
    );
    const foreign = await post('/v2/rewriter/ask-ai', { model: 'gpt-4o', prompt: 'Shorten it.', text: 'Text.' }, other);

    const masked = (key: string) => `${'*'.repeat(key.length - 4)}${key.slice(-4)}`;
    const maskedKeys = {
      aiModelApiKey: [
        { provider: 'openai', customerApiKey: masked(openai) },
        { provider: 'anthropic', customerApiKey: masked(anthropic) },
      ],
    };
    expect(updated.status).toBe(200);
    expect(updated.body.result.data).toEqual(maskedKeys);
    expect(fetched.body.result.data).toEqual(maskedKeys);
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ result: { success: true, text: 'fake openai answer for gpt-4o' } });
    const [request] = await fake.requests(openai);
    expect(request.headers.authorization).toBe(`Bearer ${openai}`);
    expect(request.body).toMatchObject({
      messages: [
        { role: 'system', content: 'Shorten it.' },
        { role: 'user', content: 'A rather long sentence.' },
      ],
    });
    expect(limited.body).toEqual({
      result: { success: false, error: 'Anthropic rate limit or quota exceeded (429); try again later.' },
    });
    expect(noKey.body).toEqual({ result: { success: false, error: 'No API key configured for provider: Gemini' } });
    expect(unknownModel.status).toBe(400);
    expect(unknownModel.body.error.status).toBe('INVALID_ARGUMENT');
    expect(unknownModel.body.error.details.issues[0].path).toBe('data.model');
    expect(foreign.body).toEqual({ result: { success: false, error: 'No API key configured for provider: OpenAI' } });
    for (const reply of [updated, fetched, answered, limited, noKey, foreign]) {
      expect(JSON.stringify(reply.body)).not.toContain(openai);
      expect(JSON.stringify(reply.body)).not.toContain(anthropic);
    }
  });
});
