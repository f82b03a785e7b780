/**
 * Email service configuration rules (api-spec "POST /v2/workspace/emailconfig/update" rules 1–2, decisions §7):
 * deep merge over the stored value, default seeding on first enable, `useEmailService` always present, and the
 * provider API key stored encrypted and shown masked, never in clear.
 *
 * This module does not import the Encryption SDK: the update handler passes `encryptSecret` / `maskSecret` in, so
 * the get function (no KMS grant, never decrypts) is bundled without it.
 */
import type { EncryptionContext } from '../crypto/encryption';
import { sealer, secretChange, type SecretChange, type SecretSealing } from '../crypto/sealed-secret';
import { getEmailConfig, putEmailConfig, type EmailConfigRecord, type EmailSettings } from '../db/email-config';
import { AbortedError, invalidFields } from '../http/errors';
import { logger } from '../http/logger';
import { STANDARD_COMMENT_TRIGGERS } from './activity-config';

/** The huddle triggers (decisions §7); seeding turns them on with the standard comment triggers. */
export const HUDDLE_TRIGGERS = ['huddle.create', 'huddle.join'] as const;

/**
 * Triggers a tenant may accumulate over many updates (each request adds at most 100). Keeps the item far below
 * DynamoDB's 400 KB limit, so a long series of updates gets INVALID_ARGUMENT rather than a storage error.
 */
export const MAX_STORED_TRIGGERS = 500;

/** `emailServiceConfig` as requests send it and responses show it (`apiKey` masked in responses). */
export interface EmailServiceConfig extends EmailSettings {
  apiKey?: string;
}

export interface EmailConfigUpdate {
  useEmailService?: boolean;
  emailServiceConfig?: EmailServiceConfig;
}

export interface EmailConfigView {
  useEmailService: boolean;
  emailServiceConfig: EmailServiceConfig;
}

/** Binds a provider key's ciphertext to its tenant and purpose: copied onto another item, it does not decrypt. */
export const providerKeyContext = (apiKeyId: string): EncryptionContext => ({ purpose: 'email-provider-key', apiKeyId });

/** Whether `update` enables the service (rule 1): `useEmailService: true` or `type: "custom"`. */
function enables(update: EmailConfigUpdate): boolean {
  return update.useEmailService === true || update.emailServiceConfig?.type === 'custom';
}

function hasTriggers(triggers: Record<string, boolean> | undefined): boolean {
  return triggers !== undefined && Object.keys(triggers).length > 0;
}

/** Whether applying `update` to `stored` seeds the defaults: it enables the service and no trigger is stored. */
export function seedsDefaults(stored: EmailConfigRecord | undefined, update: EmailConfigUpdate): boolean {
  return enables(update) && !hasTriggers(stored?.emailServiceConfig.triggers);
}

/**
 * The record after applying `update` (its `apiKey` is ignored here: `providerKey` says what happens to the key).
 * Seeding puts the defaults under the stored non-trigger settings (`type` stays as stored when one is), then the
 * request is merged over both, triggers key by key.
 */
export function mergeEmailConfig(
  stored: EmailConfigRecord | undefined,
  update: EmailConfigUpdate,
  providerKey: SecretChange,
): EmailConfigRecord {
  const storedSettings = stored?.emailServiceConfig ?? {};
  const base: EmailConfigRecord = seedsDefaults(stored, update)
    ? {
        ...stored,
        useEmailService: true,
        emailServiceConfig: {
          ...storedSettings,
          type: storedSettings.type ?? 'custom',
          triggers: Object.fromEntries([...STANDARD_COMMENT_TRIGGERS, ...HUDDLE_TRIGGERS].map((type) => [type, true])),
        },
      }
    : { ...stored, emailServiceConfig: { ...storedSettings } };

  const { apiKey: _ignored, triggers, ...fields } = update.emailServiceConfig ?? {};
  const settings: EmailSettings = { ...base.emailServiceConfig, ...withoutUndefined(fields) };
  if (triggers !== undefined) settings.triggers = { ...base.emailServiceConfig.triggers, ...triggers };
  if (Object.keys(settings.triggers ?? {}).length > MAX_STORED_TRIGGERS) {
    throw invalidFields([
      { path: 'data.emailServiceConfig.triggers', message: `The configuration may hold at most ${MAX_STORED_TRIGGERS} triggers.` },
    ]);
  }

  const merged: EmailConfigRecord = { ...base, emailServiceConfig: settings };
  if (update.useEmailService !== undefined) merged.useEmailService = update.useEmailService;
  if (providerKey.action === 'replace') merged.providerKey = providerKey.secret;
  if (providerKey.action === 'clear') delete merged.providerKey;
  return merged;
}

/** What a response shows: `useEmailService` always present, the provider key only in its masked form. */
export function presentEmailConfig(config: EmailConfigRecord | undefined): EmailConfigView {
  const { type, fromEmail, fromCompany, triggers } = config?.emailServiceConfig ?? {};
  return {
    useEmailService: config?.useEmailService ?? false,
    emailServiceConfig: withoutUndefined({ type, apiKey: config?.providerKey?.masked, fromEmail, fromCompany, triggers }),
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const ATTEMPTS = 5;

/** Applies `update` to the tenant's config and returns the result. Concurrent updates are merged in turn. */
export async function updateEmailConfig(apiKeyId: string, update: EmailConfigUpdate, sealing: SecretSealing): Promise<EmailConfigView> {
  // The sent `apiKey`: absent or the masked form keeps the stored key, "" clears it, anything else replaces it.
  const seal = sealer(sealing, providerKeyContext(apiKeyId));
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const stored = await getEmailConfig(apiKeyId);
    const providerKey = await secretChange(update.emailServiceConfig?.apiKey, stored?.config.providerKey, seal);
    const merged = mergeEmailConfig(stored?.config, update, providerKey);
    if (await putEmailConfig(apiKeyId, merged, stored?.version ?? 0)) {
      // Outcomes only: never the key, in clear or masked.
      logger.info('email config updated', { seeded: seedsDefaults(stored?.config, update), providerKey: providerKey.action });
      return presentEmailConfig(merged);
    }
  }
  throw new AbortedError('The email configuration changed concurrently; retry.');
}

export async function readEmailConfig(apiKeyId: string): Promise<EmailConfigView> {
  return presentEmailConfig((await getEmailConfig(apiKeyId))?.config);
}
