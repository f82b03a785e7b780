/**
 * Ask AI (docs/api-spec.md "POST /v2/rewriter/ask-ai", docs/decisions.md §9): the tenant's own key for the model's provider, one
 * provider call under a 25 s deadline, and a result of the operation's own shape. Provider trouble (no key, a
 * refused key, a rate limit, a timeout) is a `success: false` result, never an error envelope; messages never
 * contain the key.
 */
import { config } from '../core/config';
import type { EncryptionContext } from '../crypto/encryption';
import { callProvider } from '../adapters/ai/providers';
import type { ProviderFailure } from '../adapters/ai/provider-call';
import { getAiKeyConfig, type AiProvider } from '../db/ai-key-config';
import { invalidFields } from '../core/errors';
import { logger } from '../core/logger';
import { aiKeyContext } from './ai-key-config';
import { PROVIDER_NAMES, UNKNOWN_MODEL_MESSAGE, providerMessages, routeModel } from './ai-models';

export type AskAiResult = { success: true; text: string } | { success: false; error: string };

export interface AskAiInput {
  model: string;
  prompt: string;
  text: string;
}

/**
 * Decrypted keys are kept in memory for 60 s per tenant and provider, so that a busy tenant costs one KMS Decrypt
 * a minute per function instance rather than one per request. The stored item is still read on every request and
 * the cached key used only while its ciphertext is the stored one: a replaced or removed key takes effect at once.
 */
const KEY_CACHE_MS = 60_000;
/** Bounds the memory a long-lived instance spends on keys; the oldest entry goes first. */
const KEY_CACHE_ENTRIES = 1000;

interface CachedKey {
  ciphertext: string;
  key: string;
  expiresAt: number;
}

const keyCache = new Map<string, CachedKey>();

/**
 * The Encryption SDK (~270 KB with the KMS client) loads with the first key this instance decrypts, as a provider's
 * SDK loads with its first call: a cold start loads neither, and a call that finds no key never loads it.
 */
async function decryptSecret(ciphertext: string, context: EncryptionContext): Promise<string> {
  const encryption = await import('../crypto/encryption');
  return encryption.decryptSecret(ciphertext, context);
}

/** The tenant's key for `provider` in clear, or undefined when none is configured. */
async function providerKey(
  apiKeyId: string,
  provider: AiProvider,
): Promise<{ key: string; cached: boolean } | undefined> {
  const sealed = (await getAiKeyConfig(apiKeyId))?.config.keys[provider];
  if (sealed === undefined) return undefined;
  const cacheKey = JSON.stringify([apiKeyId, provider]);
  const hit = keyCache.get(cacheKey);
  if (hit !== undefined && hit.ciphertext === sealed.ciphertext && hit.expiresAt > Date.now())
    return { key: hit.key, cached: true };
  const key = await decryptSecret(sealed.ciphertext, aiKeyContext(apiKeyId, provider));
  keyCache.delete(cacheKey);
  keyCache.set(cacheKey, { ciphertext: sealed.ciphertext, key, expiresAt: Date.now() + KEY_CACHE_MS });
  if (keyCache.size > KEY_CACHE_ENTRIES) keyCache.delete(keyCache.keys().next().value as string);
  return { key, cached: false };
}

/** Longest provider message passed on to the customer. */
const MAX_DETAIL_CHARS = 300;

/** What the customer reads when the provider call did not produce text. */
export function failureMessage(name: string, failure: ProviderFailure, timeoutMs: number): string {
  switch (failure.kind) {
    case 'timeout':
      return `${name} timed out after ${timeoutMs / 1000} s.`;
    case 'network':
      return `Could not reach ${name} (network error).`;
    case 'empty':
      return `${name} returned no text.`;
    case 'unexpected':
      return `${name} request failed.`;
    case 'status': {
      const { status, detail } = failure;
      if (status === 401) return `${name} rejected the API key (401).`;
      if (status === 403) return `${name} refused access with this API key (403).`;
      if (status === 429) return `${name} rate limit or quota exceeded (429); try again later.`;
      if (status >= 500) return `${name} had a server error (${status}); try again later.`;
      // Other refusals (an unknown model, a text over the model's context) are the provider's to explain.
      const shown =
        detail === undefined
          ? ''
          : `: ${detail.length > MAX_DETAIL_CHARS ? `${detail.slice(0, MAX_DETAIL_CHARS)}…` : detail}`;
      return `${name} refused the request (${status})${shown}`.replace(/([^.…])$/, '$1.');
    }
  }
}

export async function askAi(apiKeyId: string, input: AskAiInput): Promise<AskAiResult> {
  const route = routeModel(input.model);
  // The schema refuses unknown models; this keeps the function safe on its own.
  if (route === undefined) throw invalidFields([{ path: 'data.model', message: UNKNOWN_MODEL_MESSAGE }]);
  const name = PROVIDER_NAMES[route.provider];
  const found = await providerKey(apiKeyId, route.provider);
  if (found === undefined) {
    logger.info('ask-ai without a key', { provider: route.provider });
    return { success: false, error: `No API key configured for provider: ${name}` };
  }

  const started = Date.now();
  const outcome = await callProvider(
    route.provider,
    { apiKey: found.key, model: input.model, ...providerMessages(route, input.prompt, input.text) },
    config.aiTimeoutMs,
  );
  // Outcomes only: never the key, the prompt, the text or the answer.
  logger.info('ask-ai answered', {
    provider: route.provider,
    model: input.model,
    keyCached: found.cached,
    success: outcome.ok,
    failure: outcome.ok ? undefined : outcome.failure.kind,
    status: !outcome.ok && outcome.failure.kind === 'status' ? outcome.failure.status : undefined,
    durationMs: Date.now() - started,
  });
  if (outcome.ok) return { success: true, text: outcome.text };
  // A provider's own message might quote what it was sent; the key never leaves in any case.
  const error = failureMessage(name, outcome.failure, config.aiTimeoutMs).split(found.key).join('[redacted]');
  return { success: false, error };
}
