import { errorBodyMessage } from '../../shared/adapters/ai/provider-call';
import { providerMessages, routeModel } from '../../shared/domain/ai-models';
import { failureMessage } from '../../shared/domain/ask-ai';

describe('model routing', () => {
  it.each([
    ['gpt-4o', 'openai', false],
    ['gpt-4.1-mini-2025-04-14', 'openai', false],
    ['gpt-3.5-turbo', 'openai', false],
    ['o1', 'openai', true],
    ['o3', 'openai', true],
    ['o4', 'openai', true],
    ['o1-mini', 'openai', true],
    ['o3-pro', 'openai', true],
    ['o4-mini', 'openai', true],
    ['claude-3-5-sonnet-latest', 'anthropic', false],
    ['claude-opus-4-1', 'anthropic', false],
    ['gemini-2.0-flash', 'gemini', false],
    ['gemini-2.5-pro-preview-06-05', 'gemini', false],
  ])('sends %s to %s (reasoning: %s)', (model, provider, reasoning) => {
    expect(routeModel(model)).toEqual({ provider, reasoning });
  });

  it.each([
    'o5',
    'o2',
    'o10',
    'gpt4',
    'gpt-',
    'claudex',
    'claude-',
    'claude',
    'gemini',
    'gemini-',
    '',
    'o3-',
    'o1preview',
    'GPT-4o',
    'Claude-3',
    ' gpt-4o',
    'gpt-4o ',
    'mistral-large',
    'gpt-4o/x',
    'gemini-pro?alt=sse',
  ])('routes no provider for %j', (model) => {
    expect(routeModel(model)).toBeUndefined();
  });
});

describe('message layout', () => {
  it('puts the prompt in the system instruction and the text in the user message for chat models', () => {
    expect(providerMessages({ provider: 'anthropic', reasoning: false }, 'Be brief.', 'Hello')).toEqual({
      system: 'Be brief.',
      user: 'Hello',
    });
  });

  it('puts the prompt before the text in one user message for reasoning models', () => {
    expect(providerMessages({ provider: 'openai', reasoning: true }, 'Be brief.', 'Hello')).toEqual({
      user: 'Be brief.\n\nHello',
    });
  });
});

describe('failure messages', () => {
  it.each([
    [{ kind: 'status', status: 401 }, 'OpenAI rejected the API key (401).'],
    [{ kind: 'status', status: 403 }, 'OpenAI refused access with this API key (403).'],
    [{ kind: 'status', status: 429 }, 'OpenAI rate limit or quota exceeded (429); try again later.'],
    [{ kind: 'status', status: 503 }, 'OpenAI had a server error (503); try again later.'],
    [{ kind: 'status', status: 404 }, 'OpenAI refused the request (404).'],
    [
      { kind: 'status', status: 400, detail: 'max_tokens is too large' },
      'OpenAI refused the request (400): max_tokens is too large.',
    ],
    [{ kind: 'status', status: 400, detail: 'x'.repeat(400) }, `OpenAI refused the request (400): ${'x'.repeat(300)}…`],
    [{ kind: 'timeout' }, 'OpenAI timed out after 25 s.'],
    [{ kind: 'network' }, 'Could not reach OpenAI (network error).'],
    [{ kind: 'empty' }, 'OpenAI returned no text.'],
    [{ kind: 'unexpected' }, 'OpenAI request failed.'],
  ] as const)('describes %j clearly', (failure, message) => {
    expect(failureMessage('OpenAI', failure, 25_000)).toBe(message);
  });
});

describe('provider error bodies', () => {
  it.each([
    [{ error: { message: 'OpenAI style' } }, 'OpenAI style'],
    [{ type: 'error', error: { type: 'x', message: 'Anthropic style' } }, 'Anthropic style'],
    ['{"error":{"code":400,"message":"Gemini style","status":"INVALID_ARGUMENT"}}', 'Gemini style'],
    ['not json', undefined],
    [{ error: {} }, undefined],
    [undefined, undefined],
  ])('finds the message in %j', (body, message) => {
    expect(errorBodyMessage(body)).toBe(message);
  });
});
