/**
 * Email service configuration rules (docs/api-spec.md "POST /v2/workspace/emailconfig/update" rules 1–2, docs/decisions.md §7):
 * deep merge over the stored value, default seeding on first enable, `useEmailService` always present, and the
 * provider API key stored encrypted and shown masked, never in clear.
 *
 * An update is written as an atomic UpdateItem of the fields, triggers and key it sends (shared/db/versioned-item.ts),
 * so concurrent updates of different fields or triggers all apply, and of the same one the last writer wins.
 *
 * This module does not import the Encryption SDK: the update handler passes `encryptSecret` / `maskSecret` in, so
 * the get function (no KMS grant, never decrypts) is bundled without it.
 */
import type { EncryptionContext } from '../crypto/encryption';
import { sealer, secretChange, type SecretChange, type SecretSealing } from '../crypto/sealed-secret';
import { getEmailConfig, writeEmailConfig, type EmailConfigRecord, type EmailSettings } from '../db/email-config';
import type { ConfigCondition, ConfigSet, ConfigWrite } from '../db/versioned-item';
import { invalidFields } from '../core/errors';
import { logger } from '../core/logger';
import { STANDARD_COMMENT_TRIGGERS } from './activity-config';
import { withoutUndefined } from '../core/objects';
import { planTriggerMap } from './trigger-map';

/** The huddle triggers (docs/decisions.md §7); seeding turns them on with the standard comment triggers. */
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
export const providerKeyContext = (apiKeyId: string): EncryptionContext => ({
  purpose: 'email-provider-key',
  apiKeyId,
});

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
      {
        path: 'data.emailServiceConfig.triggers',
        message: `The configuration may hold at most ${MAX_STORED_TRIGGERS} triggers.`,
      },
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
    emailServiceConfig: withoutUndefined({
      type,
      apiKey: config?.providerKey?.masked,
      fromEmail,
      fromCompany,
      triggers,
    }),
  };
}

const SETTINGS = ['emailServiceConfig'];
const TRIGGERS = ['emailServiceConfig', 'triggers'];
const SETTING_FIELDS = ['type', 'fromEmail', 'fromCompany'] as const;

/**
 * The write that applies `update` and `providerKey` to `stored` (undefined: nothing stored), with the same result
 * as mergeEmailConfig but touching only what the update changes, so that it commutes with concurrent updates of
 * other fields and triggers. Its conditions pin what the plan read: whether triggers are stored (seeding, or
 * creating the trigger map), how many (the limit), and the provider key a sent-back mask keeps. Throws
 * InvalidArgumentError when the merged triggers would exceed MAX_STORED_TRIGGERS (triggers are never removed, so
 * a later read cannot lower the count).
 */
export function planEmailUpdate(
  stored: EmailConfigRecord | undefined,
  update: EmailConfigUpdate,
  providerKey: SecretChange,
): ConfigWrite<EmailConfigRecord> {
  const merged = mergeEmailConfig(stored, update, providerKey);
  if (stored === undefined) return { create: merged };

  const sent = update.emailServiceConfig ?? {};
  const set: ConfigSet[] = SETTING_FIELDS.flatMap((field) =>
    sent[field] === undefined ? [] : [{ path: [...SETTINGS, field], value: sent[field] }],
  );
  if (update.useEmailService !== undefined) set.push({ path: ['useEmailService'], value: update.useEmailService });
  const remove = providerKey.action === 'clear' ? [['providerKey']] : [];
  if (providerKey.action === 'replace') set.push({ path: ['providerKey'], value: providerKey.secret });
  const conditions: ConfigCondition[] = [{ exists: SETTINGS }];
  if (providerKey.action === 'keep' && providerKey.masked !== undefined)
    conditions.push({ equals: ['providerKey', 'masked'], value: providerKey.masked });

  if (seedsDefaults(stored, update)) {
    // The whole trigger map, computed by the merge, while still no trigger is stored; the defaults the merge
    // filled in around it apply as in the merge.
    conditions.push({ absentOrEmpty: TRIGGERS });
    set.push({ path: TRIGGERS, value: merged.emailServiceConfig.triggers });
    if (sent.type === undefined) set.push({ path: [...SETTINGS, 'type'], value: 'custom', ifAbsent: true });
    if (update.useEmailService === undefined) set.push({ path: ['useEmailService'], value: true });
  } else {
    const triggers = planTriggerMap(TRIGGERS, stored.emailServiceConfig.triggers, sent.triggers, MAX_STORED_TRIGGERS);
    conditions.push(...triggers.conditions);
    set.push(...triggers.set);
  }
  return { update: { set, remove, conditions } };
}

/** Applies `update` to the tenant's config and returns the config as stored after it. Concurrent updates all apply. */
export async function updateEmailConfig(
  apiKeyId: string,
  update: EmailConfigUpdate,
  sealing: SecretSealing,
): Promise<EmailConfigView> {
  // The sent `apiKey`: absent or the stored masked form keeps the stored key, "" clears it, another masked form is
  // refused, anything else replaces it (encrypted once, however often the write is planned).
  const seal = sealer(sealing, providerKeyContext(apiKeyId));
  let outcome: { seeded: boolean; providerKey: SecretChange['action'] } | undefined;
  const written = await writeEmailConfig(apiKeyId, async (stored) => {
    const providerKey = await secretChange(
      update.emailServiceConfig?.apiKey,
      stored?.providerKey,
      seal,
      'data.emailServiceConfig.apiKey',
    );
    outcome = { seeded: seedsDefaults(stored, update), providerKey: providerKey.action };
    return planEmailUpdate(stored, update, providerKey);
  });
  // Outcomes only: never the key, in clear or masked.
  logger.info('email config updated', { ...outcome });
  return presentEmailConfig(written);
}

export async function readEmailConfig(apiKeyId: string): Promise<EmailConfigView> {
  return presentEmailConfig((await getEmailConfig(apiKeyId))?.config);
}
