/**
 * The AI provider keys of a tenant, used by Ask AI (one item).
 *
 *   pk T#<apiKeyId>   sk CONFIG#AI_KEYS   config: {keys: {openai?, anthropic?, gemini?}}, version
 *
 * Each key is kept as its ciphertext plus its masked form (shared/crypto/sealed-secret.ts): the get route shows
 * the masked form and never decrypts; only Ask AI decrypts.
 */
import type { AiProvider } from '../adapters/ai/provider-call';
import type { SealedSecret } from '../crypto/sealed-secret';
import { versionedConfig, type ConfigPlanner } from './versioned-item';

// The provider list is the adapters' (one adapter per provider); the stored keys are named by it.
export { AI_PROVIDERS, type AiProvider } from '../adapters/ai/provider-call';

export interface AiKeyConfigRecord {
  keys: Partial<Record<AiProvider, SealedSecret>>;
}

const store = versionedConfig<AiKeyConfigRecord>('AI_KEYS');

export const getAiKeyConfig = (apiKeyId: string) => store.get(apiKeyId);

/**
 * Applies the write `plan` makes from the stored config (see versioned-item.ts) and returns the config as stored
 * after it. Throws what `plan` throws, and AbortedError when the stored shape kept changing under the plans.
 */
export const writeAiKeyConfig = (apiKeyId: string, plan: ConfigPlanner<AiKeyConfigRecord>) =>
  store.write(apiKeyId, plan);
