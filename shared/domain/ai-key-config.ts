/**
 * The AI provider keys Ask AI uses (docs/decisions.md §9, §10): per tenant, one key per provider, stored encrypted and
 * shown masked, never in clear.
 *
 * An update merges per provider: providers the request does not name keep their keys; a named provider's
 * `customerApiKey` replaces its key, `""` removes it, and its masked form sent back (a client saving what get
 * returned) keeps it; any other masked form is refused, never stored as a key. Each provider's key is one path of
 * an atomic UpdateItem (shared/db/versioned-item.ts), so concurrent updates of different providers all apply, and
 * of the same provider the last writer wins. This module does not import the Encryption SDK: the update handler
 * passes the sealing functions in, so the get function (no KMS grant) is bundled without it.
 */
import type { EncryptionContext } from '../crypto/encryption';
import { sealer, secretChange, type SecretChange, type SecretSealing } from '../crypto/sealed-secret';
import {
  AI_PROVIDERS,
  getAiKeyConfig,
  writeAiKeyConfig,
  type AiKeyConfigRecord,
  type AiProvider,
} from '../db/ai-key-config';
import type { ConfigCondition, ConfigWrite } from '../db/versioned-item';
import { logger } from '../core/logger';

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
export function mergeAiKeys(
  stored: AiKeyConfigRecord | undefined,
  changes: ReadonlyMap<AiProvider, SecretChange>,
): AiKeyConfigRecord {
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

/**
 * The write that applies one change per named provider to `stored` (undefined: nothing stored): the whole record
 * while none is stored, else one path per provider, so that it commutes with concurrent updates of other
 * providers. A kept key sent back masked holds only while the provider still has the key with that mask.
 */
export function planAiKeysUpdate(
  stored: AiKeyConfigRecord | undefined,
  changes: ReadonlyMap<AiProvider, SecretChange>,
): ConfigWrite<AiKeyConfigRecord> {
  if (stored === undefined) return { create: mergeAiKeys(undefined, changes) };
  const conditions: ConfigCondition[] = [{ exists: ['keys'] }];
  const update = { set: [] as Array<{ path: string[]; value: unknown }>, remove: [] as string[][], conditions };
  for (const [provider, change] of changes) {
    if (change.action === 'replace') update.set.push({ path: ['keys', provider], value: change.secret });
    if (change.action === 'clear') update.remove.push(['keys', provider]);
    if (change.action === 'keep' && change.masked !== undefined)
      conditions.push({ equals: ['keys', provider, 'masked'], value: change.masked });
  }
  return { update };
}

/**
 * Applies `entries` (one per provider; the schema refuses repeats) and returns every stored key, masked, as stored
 * after the update. Concurrent updates all apply; each new key is encrypted once however often the write is
 * planned. Throws InvalidArgumentError for a masked key that keeps nothing.
 */
export async function updateAiKeys(
  apiKeyId: string,
  entries: readonly AiModelApiKey[],
  sealing: SecretSealing,
): Promise<AiKeyConfigView> {
  const sent = entries.map((entry) => ({ ...entry, seal: sealer(sealing, aiKeyContext(apiKeyId, entry.provider)) }));
  const changes = new Map<AiProvider, SecretChange>();
  const written = await writeAiKeyConfig(apiKeyId, async (stored) => {
    changes.clear();
    for (const [index, { provider, customerApiKey, seal }] of sent.entries()) {
      changes.set(
        provider,
        await secretChange(customerApiKey, stored?.keys[provider], seal, `data.aiModelApiKey.${index}.customerApiKey`),
      );
    }
    return planAiKeysUpdate(stored, changes);
  });
  // Outcomes only: never a key, in clear or masked.
  logger.info('AI key config updated', {
    changes: Object.fromEntries([...changes].map(([provider, change]) => [provider, change.action])),
  });
  return presentAiKeys(written);
}

export async function readAiKeys(apiKeyId: string): Promise<AiKeyConfigView> {
  return presentAiKeys((await getAiKeyConfig(apiKeyId))?.config);
}
