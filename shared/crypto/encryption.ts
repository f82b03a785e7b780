/**
 * Envelope encryption of secrets at rest (readable auth tokens, customer provider keys) with the AWS Encryption
 * SDK and its KMS keyring: in AWS under the stack's KMS key (KMS_KEY_ARN); on the local stack and in the tests
 * under the local stand-in for KMS (shared/crypto/local-kms.ts, keyed by LOCAL_KEYS_FILE), so that the same
 * keyring, and the same KMS commands, run everywhere. The encryption context binds a ciphertext to its owner and
 * purpose, so a ciphertext copied onto another item does not decrypt there.
 */
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { KMS, KmsKeyringNode } from '@aws-crypto/kms-keyring-node';
import { CommitmentPolicy, MultiKeyringNode, type KeyringNode } from '@aws-crypto/material-management-node';
import { RawAesKeyringNode, RawAesWrappingSuiteIdentifier } from '@aws-crypto/raw-aes-keyring-node';
import { config } from '../core/config';
import { LOCAL_KMS_KEY_ARN, LocalKmsHandler } from './local-kms';
import { readLocalKeys } from './local-keys';

const policy = CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT;
const { encrypt } = buildEncrypt(policy);
const { decrypt } = buildDecrypt(policy);

interface Keyrings {
  /** The KMS client every keyring call goes through (the grant check watches it). */
  kms: KMS;
  encrypt: KeyringNode;
  decrypt: KeyringNode;
}

function buildKeyrings(): Keyrings {
  if (config.kmsKeyArn !== undefined) {
    const kms = new KMS({});
    const keyring = new KmsKeyringNode({ generatorKeyId: config.kmsKeyArn, clientProvider: () => kms });
    return { kms, encrypt: keyring, decrypt: keyring };
  }
  if (config.localKeysFile !== undefined) {
    const aesKey = Buffer.from(readLocalKeys(config.localKeysFile).aesKey, 'base64');
    const kms = new KMS({
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      requestHandler: new LocalKmsHandler(aesKey),
    });
    const keyring = new KmsKeyringNode({ generatorKeyId: LOCAL_KMS_KEY_ARN, clientProvider: () => kms });
    // Local data written before the local KMS stand-in was wrapped by a raw AES keyring under the same key: it
    // still decrypts. New secrets are written through KMS only.
    const legacy = new RawAesKeyringNode({
      keyNamespace: 'collab-backend-local',
      keyName: 'local-aes-256',
      unencryptedMasterKey: new Uint8Array(aesKey),
      wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
    });
    return { kms, encrypt: keyring, decrypt: new MultiKeyringNode({ generator: keyring, children: [legacy] }) };
  }
  throw new Error('Encryption needs KMS_KEY_ARN (AWS) or LOCAL_KEYS_FILE (local stack).');
}

// Built on first use: functions that never encrypt do not need either variable.
let keyrings: Keyrings | undefined;
function getKeyrings(): Keyrings {
  keyrings ??= buildKeyrings();
  return keyrings;
}

/** The KMS client of the keyring, built once. Throws when neither KMS_KEY_ARN nor LOCAL_KEYS_FILE is set. */
export function kmsClient(): KMS {
  return getKeyrings().kms;
}

/** What a ciphertext belongs to; every value must match again at decryption. */
export type EncryptionContext = Record<string, string>;

/** Encrypts `plaintext`; returns the Encryption SDK message, base64. */
export async function encryptSecret(plaintext: string, context: EncryptionContext): Promise<string> {
  const { result } = await encrypt(getKeyrings().encrypt, plaintext, { encryptionContext: context });
  return result.toString('base64');
}

/**
 * Decrypts what `encryptSecret` returned. Throws when the ciphertext was tampered with, was made by another
 * key, or carries a different encryption context than `context`.
 */
export async function decryptSecret(ciphertext: string, context: EncryptionContext): Promise<string> {
  const { plaintext, messageHeader } = await decrypt(getKeyrings().decrypt, Buffer.from(ciphertext, 'base64'));
  for (const [name, value] of Object.entries(context)) {
    if (messageHeader.encryptionContext[name] !== value) {
      throw new Error(`Encryption context mismatch on "${name}".`);
    }
  }
  return plaintext.toString('utf8');
}

/** `decryptSecret`, or a stand-in of its shape (the worker's cache, a test's fake). */
export type DecryptSecret = (ciphertext: string, context: EncryptionContext) => Promise<string>;

type Decrypt = DecryptSecret;

export interface DecryptCacheOptions {
  /** Most plaintexts kept; the least recently used goes first. */
  maxEntries: number;
  /** How long a plaintext is kept after it was decrypted, in ms. */
  maxAgeMs: number;
  /** The decryption behind the cache; default `decryptSecret`. */
  decrypt?: Decrypt;
  now?: () => number;
}

/**
 * `decryptSecret` behind a small in-memory cache, for a worker that decrypts the same few secrets again and again
 * (the delivery worker signs every attempt with its endpoint's secret). Each decryption costs a KMS Decrypt call and
 * the Encryption SDK's ECDSA P-384 signature check, which was a third of the delivery worker's CPU. The cache is keyed
 * by the ciphertext and the context together: a ciphertext never changes its plaintext, so an entry cannot be stale;
 * a rotated secret is a new ciphertext. Entries leave after `maxAgeMs`, so a plaintext does not stay in memory for
 * the life of a warm process. A failed decryption is not cached.
 */
export function cachedDecrypt(options: DecryptCacheOptions): Decrypt {
  const decrypt = options.decrypt ?? decryptSecret;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { plaintext: Promise<string>; at: number }>();
  return async (ciphertext, context) => {
    const key = `${JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}\n${ciphertext}`;
    const hit = entries.get(key);
    entries.delete(key);
    if (hit !== undefined && now() - hit.at < options.maxAgeMs) {
      entries.set(key, hit);
      return hit.plaintext;
    }
    // Concurrent attempts for one endpoint share one decryption.
    const entry = { plaintext: decrypt(ciphertext, context), at: now() };
    entries.set(key, entry);
    while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value as string);
    try {
      return await entry.plaintext;
    } catch (error) {
      if (entries.get(key) === entry) entries.delete(key);
      throw error;
    }
  };
}

/** The form in which secrets are shown back: everything but the last four characters hidden. */
export function maskSecret(secret: string): string {
  const visible = secret.slice(-4);
  return `${'*'.repeat(Math.max(4, secret.length - 4))}${visible}`;
}
