/** Ask AI through OpenAI's official SDK: one Chat Completions request, no retries. Loaded only when used. */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { config } from '../../core/config';
import { stainlessFailure, type ProviderRequest } from './provider-call';

export async function complete(request: ProviderRequest): Promise<string> {
  const client = new OpenAI({
    apiKey: request.apiKey,
    baseURL: config.aiBaseUrls.openai,
    timeout: request.timeoutMs,
    // One attempt: a retry would eat the 25 s budget, and a rate-limited or failing call is the caller's to retry.
    maxRetries: 0,
  });
  const messages: ChatCompletionMessageParam[] = [
    ...(request.system === undefined ? [] : [{ role: 'system' as const, content: request.system }]),
    { role: 'user', content: request.user },
  ];
  try {
    const completion = await client.chat.completions.create(
      { model: request.model, messages },
      { signal: request.signal },
    );
    return completion.choices[0]?.message?.content ?? '';
  } catch (error) {
    throw stainlessFailure(error, OpenAI);
  }
}
