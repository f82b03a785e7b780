/**
 * The body of a webhook message (docs/decisions.md §11 "Payload and signature"): `{"type", "timestamp", "data"}`,
 * shaped by the tenant's advanced webhook configuration, in this order:
 *
 * 1. `enableDataProtection`: every user object inside `data` is reduced to `{userId}`. A **user object** is a plain
 *    object whose `userId` is a string and whose every other key is a user-profile field: `name`, `email`,
 *    `initial`, `accessRole` (the user shapes of docs/api-spec.md: Add/Update Users' user object, Get Users'
 *    items, `actionUser`, `notifyUsers`) or `photoUrl`, `color`, `textColor` (the hosted service's user profile,
 *    which clients put in their own data). An object with any other key next to `userId` is not a user but
 *    something about one (a notification config's `metadata` `{organizationId, apiKey, documentId, userId}`), so it
 *    is kept and searched further. `data` itself is never reduced, only what it contains, at any depth, in
 *    objects and arrays alike (`actionUser`, each of `notifyUsers`, `displayHeadlineMessageTemplateData.actionUser`,
 *    users inside `entityData`…).
 * 2. `encryptData`: `data` becomes `{encryptedData, encryptedKey, iv}`: the JSON of `data` under AES-256-CBC
 *    (PKCS#7 padding) with a fresh random 256-bit key and 128-bit IV, the key wrapped with RSA-OAEP (SHA-256,
 *    MGF1-SHA-256, no label) under the tenant's `publicKey` (base64 DER SubjectPublicKeyInfo), each base64.
 * 3. otherwise `encodeData`: the `data` field is replaced by `encodedData`, the base64 of the JSON of `data`.
 *
 * With both `encodeData` and `encryptData` on, the data is encrypted and not encoded: the encrypted form is
 * already base64 text, which is what encoding is for (payloads that pass strict receivers' filters), and the
 * receiver decrypts straight to JSON without a second decoding step.
 */
import { createCipheriv, createPublicKey, constants, publicEncrypt, randomBytes } from 'node:crypto';
import type { WebhookEvent } from './events';

/**
 * The fields of the advanced webhook configuration that shape a body (WebhookConfigView in ../webhook-config.ts,
 * which probes keys with `encryptData` here, so this module does not import it).
 */
export interface PayloadConfig {
  encodeData: boolean;
  encryptData: boolean;
  publicKey: string;
  enableDataProtection: boolean;
}

export interface EncryptedData {
  encryptedData: string;
  encryptedKey: string;
  iv: string;
}

/** The keys a user object may have besides `userId` (see the module comment). */
export const USER_PROFILE_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'email',
  'initial',
  'accessRole',
  'photoUrl',
  'color',
  'textColor',
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Whether `value` is a user object: a string `userId` and nothing but user-profile fields beside it. */
export function isUserObject(value: unknown): value is { userId: string } {
  return (
    isPlainObject(value) &&
    Object.hasOwn(value, 'userId') &&
    typeof value.userId === 'string' &&
    Object.keys(value).every((key) => key === 'userId' || USER_PROFILE_FIELDS.has(key))
  );
}

/**
 * `value` with every user object inside it reduced to `{userId}`; `value` itself is kept as it is when it is one.
 * Returns new objects and arrays, never changing the input. Objects are rebuilt with Object.fromEntries, so a key
 * named `__proto__` stays an ordinary key.
 */
export function protectUserData(value: unknown): unknown {
  const inside = (item: unknown): unknown => (isUserObject(item) ? { userId: item.userId } : protectUserData(item));
  if (Array.isArray(value)) return value.map(inside);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, inside(item)]));
  return value;
}

/** Throws when `publicKey` is not a base64 DER SubjectPublicKeyInfo (the configuration refuses such keys). */
export function encryptData(data: unknown, publicKey: string): EncryptedData {
  const key = randomBytes(32);
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  const encrypted = Buffer.concat([cipher.update(JSON.stringify(data) ?? 'null', 'utf8'), cipher.final()]);
  const recipient = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
  const wrappedKey = publicEncrypt(
    { key: recipient, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    key,
  );
  return {
    encryptedData: encrypted.toString('base64'),
    encryptedKey: wrappedKey.toString('base64'),
    iv: iv.toString('base64'),
  };
}

/**
 * The JSON body of the message for `event` under `config` (see the module comment). Throws when encryption is on
 * and the stored public key cannot be used.
 */
export function webhookBody(event: Pick<WebhookEvent, 'type' | 'timestamp' | 'data'>, config: PayloadConfig): string {
  const data = config.enableDataProtection ? protectUserData(event.data) : event.data;
  const head = { type: event.type, timestamp: new Date(event.timestamp).toISOString() };
  if (config.encryptData) return JSON.stringify({ ...head, data: encryptData(data, config.publicKey) });
  if (config.encodeData)
    return JSON.stringify({
      ...head,
      encodedData: Buffer.from(JSON.stringify(data) ?? 'null', 'utf8').toString('base64'),
    });
  return JSON.stringify({ ...head, data: data ?? null });
}
