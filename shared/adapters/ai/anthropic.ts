/** Ask AI through Anthropic's official SDK: one Messages request, no retries. Loaded only when used. */
import Anthropic from '@anthropic-ai/sdk';
import { config } from '../../core/config';
import { stainlessFailure, type ProviderRequest } from './provider-call';

/**
 * Anthropic requires an output limit. 4096 tokens is accepted by every Claude model, and about what a model
 * writes within the 25 s deadline anyway.
 */
const MAX_OUTPUT_TOKENS = 4096;

export async function complete(request: ProviderRequest): Promise<string> {
  const client = new Anthropic({
    apiKey: request.apiKey,
    baseURL: config.aiBaseUrls.anthropic,
    timeout: request.timeoutMs,
    // One attempt: a retry would eat the 25 s budget, and a rate-limited or failing call is the caller's to retry.
    maxRetries: 0,
  });
  try {
    const message = await client.messages.create(
      {
        model: request.model,
        max_tokens: MAX_OUTPUT_TOKENS,
        ...(request.system === undefined ? {} : { system: request.system }),
        messages: [{ role: 'user', content: request.user }],
      },
      { signal: request.signal },
    );
    return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  } catch (error) {
    throw stainlessFailure(error, Anthropic);
  }
}
