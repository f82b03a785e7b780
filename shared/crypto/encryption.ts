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

/** The form in which secrets are shown back: everything but the last four characters hidden. */
export function maskSecret(secret: string): string {
  const visible = secret.slice(-4);
  return `${'*'.repeat(Math.max(4, secret.length - 4))}${visible}`;
}
