/**
 * The AI provider keys Ask AI uses (decisions §9, §10): per tenant, one key per provider, stored encrypted and
 * shown masked, never in clear.
 *
 * An update merges per provider: providers the request does not name keep their keys; a named provider's
 * `customerApiKey` replaces its key, `""` removes it, and its masked form sent back (a client saving what get
 * returned) keeps it. This module does not import the Encryption SDK: the update handler passes the sealing
 * functions in, so the get function (no KMS grant) is bundled without it.
 */
import type { EncryptionContext } from '../crypto/encryption';
import { sealer, secretChange, type SecretChange, type SecretSealing } from '../crypto/sealed-secret';
import { AI_PROVIDERS, getAiKeyConfig, putAiKeyConfig, type AiKeyConfigRecord, type AiProvider } from '../db/ai-key-config';
import { AbortedError } from '../http/errors';
import { logger } from '../http/logger';

export interface AiModelApiKey {
  provider: AiProvider;
  customerApiKey: string;
}

export interface AiKeyConfigView {
  /** One entry per provider with a key, in the order openai, anthropic, gemini; the key masked. */
  aiModelApiKey: AiModelApiKey[];
}

/**
 * Binds a key's ciphertext to its tenant, its provider and its purpose: copied onto another tenant's item, or
 * under another provider, it does not decrypt.
 */
export const aiKeyContext = (apiKeyId: string, provider: AiProvider): EncryptionContext => ({
  purpose: 'ai-provider-key',
  apiKeyId,
  provider,
});

/** The record after applying one change per named provider. */
export function mergeAiKeys(stored: AiKeyConfigRecord | undefined, changes: ReadonlyMap<AiProvider, SecretChange>): AiKeyConfigRecord {
  const keys = { ...stored?.keys };
  for (const [provider, change] of changes) {
    if (change.action === 'replace') keys[provider] = change.secret;
    if (change.action === 'clear') delete keys[provider];
  }
  return { keys };
}

export function presentAiKeys(config: AiKeyConfigRecord | undefined): AiKeyConfigView {
  return {
    aiModelApiKey: AI_PROVIDERS.flatMap((provider) => {
      const key = config?.keys[provider];
      return key === undefined ? [] : [{ provider, customerApiKey: key.masked }];
    }),
  };
}

const ATTEMPTS = 5;

/**
 * Applies `entries` (one per provider; the schema refuses repeats) and returns every stored key, masked.
 * Concurrent updates are merged in turn; each new key is encrypted once however many attempts follow.
 */
export async function updateAiKeys(apiKeyId: string, entries: readonly AiModelApiKey[], sealing: SecretSealing): Promise<AiKeyConfigView> {
  const sent = entries.map((entry) => ({ ...entry, seal: sealer(sealing, aiKeyContext(apiKeyId, entry.provider)) }));
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const stored = await getAiKeyConfig(apiKeyId);
    const changes = new Map<AiProvider, SecretChange>();
    for (const { provider, customerApiKey, seal } of sent) {
      changes.set(provider, await secretChange(customerApiKey, stored?.config.keys[provider], seal));
    }
    const merged = mergeAiKeys(stored?.config, changes);
    if (await putAiKeyConfig(apiKeyId, merged, stored?.version ?? 0)) {
      // Outcomes only: never a key, in clear or masked.
      logger.info('AI key config updated', { changes: Object.fromEntries([...changes].map(([provider, change]) => [provider, change.action])) });
      return presentAiKeys(merged);
    }
  }
  throw new AbortedError('The AI key configuration changed concurrently; retry.');
}

export async function readAiKeys(apiKeyId: string): Promise<AiKeyConfigView> {
  return presentAiKeys((await getAiKeyConfig(apiKeyId))?.config);
}
