/**
 * The AI provider keys of a tenant, used by Ask AI (one item).
 *
 *   pk T#<apiKeyId>   sk CONFIG#AI_KEYS   config: {keys: {openai?, anthropic?, gemini?}}, version
 *
 * Each key is kept as its ciphertext plus its masked form (shared/crypto/sealed-secret.ts): the get route shows
 * the masked form and never decrypts; only Ask AI decrypts.
 */
import type { SealedSecret } from '../crypto/sealed-secret';
import { versionedConfig } from './versioned-item';

export const AI_PROVIDERS = ['openai', 'anthropic', 'gemini'] as const;

export type AiProvider = (typeof AI_PROVIDERS)[number];

export interface AiKeyConfigRecord {
  keys: Partial<Record<AiProvider, SealedSecret>>;
}

const store = versionedConfig<AiKeyConfigRecord>('AI_KEYS');

export const getAiKeyConfig = (apiKeyId: string) => store.get(apiKeyId);

/**
 * Stores `config` if the stored version is still `expectedVersion` (0: nothing stored); false when another
 * writer changed it in between.
 */
export const putAiKeyConfig = (apiKeyId: string, config: AiKeyConfigRecord, expectedVersion: number) =>
  store.put(apiKeyId, config, expectedVersion);
