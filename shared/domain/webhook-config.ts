/**
 * The advanced webhook configuration (docs/decisions.md §11): whether events are delivered to the tenant's
 * endpoints, and how their data is shaped (encoded, encrypted under the tenant's RSA key, user objects reduced to
 * their ids). Partial updates merge field by field, so concurrent updates of different fields all apply.
 */
import { createPublicKey } from 'node:crypto';
import { FailedPreconditionError, invalidFields } from '../core/errors';
import { withoutUndefined } from '../core/objects';
import type { ConfigCondition, ConfigSet, ConfigWrite } from '../db/versioned-item';
import { getWebhookConfig, writeWebhookConfig, type AdvancedWebhookConfig } from '../db/webhook-config';
import { encryptData } from './webhooks/payload';

/** The configuration as the API shows it: every field, with its default when never set. */
export type WebhookConfigView = Required<AdvancedWebhookConfig>;

const FIELDS = ['isEnabled', 'encodeData', 'encryptData', 'publicKey', 'enableDataProtection'] as const;

export function presentWebhookConfig(config: AdvancedWebhookConfig | undefined): WebhookConfigView {
  return {
    isEnabled: config?.isEnabled ?? false,
    encodeData: config?.encodeData ?? false,
    encryptData: config?.encryptData ?? false,
    publicKey: config?.publicKey ?? '',
    enableDataProtection: config?.enableDataProtection ?? false,
  };
}

/** The smallest RSA modulus a tenant's encryption key may have. */
export const MIN_RSA_BITS = 2048;

// A base64 DER SubjectPublicKeyInfo of a 2048-, 3072- or 4096-bit RSA key with exponent 65537, spelled out so that
// the document can state it: the fixed header of each size, the modulus (its first byte with the top bit set, so
// the key has exactly that size), then the exponent, aligned as base64 falls for each size.
const B64 = '[A-Za-z0-9+/]';
const TOP_BIT_SET = '[g-z0-9+/]';
const RSA_KEY_SHAPES = [
  `MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA${TOP_BIT_SET}${B64}{340}[AQgw]IDAQAB`,
  `MIIBojANBgkqhkiG9w0BAQEFAAOCAY8AMIIBigKCAYEA${TOP_BIT_SET}${B64}{511}AgMBAAE=`,
  `MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEA${TOP_BIT_SET}${B64}{681}[AEIMQUYcgkosw048]CAwEAAQ==`,
];

/** What Update Advanced Webhook Config takes as `publicKey` (publicKeyProblem still parses it). */
export const RSA_PUBLIC_KEY_PATTERN = new RegExp(`^(${RSA_KEY_SHAPES.join('|')})$`);

/**
 * Why a key that parses as an RSA public key still cannot wrap a message key: a DER SubjectPublicKeyInfo can hold
 * a modulus no RSA key has (an even one parses, and OpenSSL then fails every encryption with "no inverse").
 */
export const UNUSABLE_KEY_MESSAGE =
  'Cannot encrypt with this key: RSA-OAEP (SHA-256) encryption under it failed, so no event could be delivered. Send the SubjectPublicKeyInfo of a working RSA key pair.';

/** Whether delivery can encrypt under `publicKey`: a probe encrypted exactly as every payload will be (payload.ts). */
function encryptsWith(publicKey: string): boolean {
  try {
    encryptData({ probe: true }, publicKey);
    return true;
  } catch {
    return false;
  }
}

/**
 * Null when `publicKey` is base64 DER (SubjectPublicKeyInfo) of an RSA key of at least 2048 bits that encrypts as
 * delivery will (a probe), else why not.
 */
export function publicKeyProblem(publicKey: string): string | null {
  const der = Buffer.from(publicKey, 'base64');
  if (der.length === 0 || der.toString('base64') !== publicKey.replace(/\s/g, ''))
    return 'Must be base64 (DER, SubjectPublicKeyInfo).';
  try {
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'rsa') return 'Must be an RSA public key.';
    if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS)
      return `Must be an RSA key of at least ${MIN_RSA_BITS} bits.`;
    return encryptsWith(publicKey) ? null : UNUSABLE_KEY_MESSAGE;
  } catch {
    return 'Must be a DER-encoded SubjectPublicKeyInfo public key.';
  }
}

/**
 * The write that applies `update` to `stored` (undefined: never configured). The first update must enable the
 * service (FailedPreconditionError); `encryptData: true` needs a public key, sent or stored, that encrypts
 * (InvalidArgumentError). Relying on the stored key is conditional on its being the key that was probed.
 */
export function planWebhookUpdate(
  stored: AdvancedWebhookConfig | undefined,
  update: AdvancedWebhookConfig,
): ConfigWrite<AdvancedWebhookConfig> {
  if (update.publicKey !== undefined) {
    const problem = publicKeyProblem(update.publicKey);
    if (problem !== null) throw invalidFields([{ path: 'data.publicKey', message: problem }]);
  }
  if (stored === undefined && update.isEnabled !== true) {
    throw new FailedPreconditionError(
      'Advanced webhooks are not configured yet: the first update must send isEnabled: true.',
    );
  }
  const conditions: ConfigCondition[] = [];
  if (update.encryptData === true && update.publicKey === undefined) {
    if (stored?.publicKey === undefined) {
      throw invalidFields([{ path: 'data.encryptData', message: 'Needs a publicKey: send one, or store one first.' }]);
    }
    // A key stored before keys were probed may be unusable: turning encryption on with it would fail every event.
    if (!encryptsWith(stored.publicKey))
      throw invalidFields([
        { path: 'data.encryptData', message: `The stored publicKey is unusable. ${UNUSABLE_KEY_MESSAGE}` },
      ]);
    // The key probed is the key relied on: a concurrent update that replaced it makes this plan run again.
    conditions.push({ equals: ['publicKey'], value: stored.publicKey });
  }
  const given = withoutUndefined(update);
  if (stored === undefined) return { create: given };
  const set: ConfigSet[] = FIELDS.flatMap((field) =>
    given[field] === undefined ? [] : [{ path: [field], value: given[field] }],
  );
  return { update: { set, remove: [], conditions } };
}

/** Applies `update` and returns the whole configuration as stored after it. */
export async function updateWebhookConfig(apiKeyId: string, update: AdvancedWebhookConfig): Promise<WebhookConfigView> {
  return presentWebhookConfig(await writeWebhookConfig(apiKeyId, (stored) => planWebhookUpdate(stored, update)));
}

export async function readWebhookConfig(apiKeyId: string): Promise<WebhookConfigView> {
  return presentWebhookConfig((await getWebhookConfig(apiKeyId))?.config);
}

export const WEBHOOKS_NOT_ENABLED =
  'Advanced webhooks are not enabled. Enable them with /v2/workspace/advancedwebhookconfig/update {"isEnabled": true}.';

/**
 * The configuration, when advanced webhooks are enabled: every endpoint, message and attempt operation starts
 * here (docs/decisions.md §11). Throws FailedPreconditionError otherwise.
 */
export async function requireWebhooksEnabled(apiKeyId: string): Promise<WebhookConfigView> {
  const config = await readWebhookConfig(apiKeyId);
  if (!config.isEnabled) throw new FailedPreconditionError(WEBHOOKS_NOT_ENABLED);
  return config;
}
