/**
 * Envelope encryption of secrets at rest (readable auth tokens, customer provider keys) with the AWS Encryption
 * SDK: a KMS keyring in AWS (KMS_KEY_ARN), a raw AES keyring from the local keys file on the local stack
 * (LOCAL_KEYS_FILE). The encryption context binds a ciphertext to its owner and purpose, so a ciphertext copied
 * onto another item does not decrypt there.
 */
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { KmsKeyringNode } from '@aws-crypto/kms-keyring-node';
import { CommitmentPolicy, type KeyringNode } from '@aws-crypto/material-management-node';
import { RawAesKeyringNode, RawAesWrappingSuiteIdentifier } from '@aws-crypto/raw-aes-keyring-node';
import { config } from '../config';
import { readLocalKeys } from './local-keys';

const policy = CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT;
const { encrypt } = buildEncrypt(policy);
const { decrypt } = buildDecrypt(policy);

function buildKeyring(): KeyringNode {
  if (config.kmsKeyArn !== undefined) {
    return new KmsKeyringNode({ generatorKeyId: config.kmsKeyArn });
  }
  if (config.localKeysFile !== undefined) {
    return new RawAesKeyringNode({
      keyNamespace: 'collab-backend-local',
      keyName: 'local-aes-256',
      unencryptedMasterKey: new Uint8Array(Buffer.from(readLocalKeys(config.localKeysFile).aesKey, 'base64')),
      wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
    });
  }
  throw new Error('Encryption needs KMS_KEY_ARN (AWS) or LOCAL_KEYS_FILE (local stack).');
}

// Built on first use: functions that never encrypt do not need either variable.
let keyring: KeyringNode | undefined;
function getKeyring(): KeyringNode {
  keyring ??= buildKeyring();
  return keyring;
}

/** What a ciphertext belongs to; every value must match again at decryption. */
export type EncryptionContext = Record<string, string>;

/** Encrypts `plaintext`; returns the Encryption SDK message, base64. */
export async function encryptSecret(plaintext: string, context: EncryptionContext): Promise<string> {
  const { result } = await encrypt(getKeyring(), plaintext, { encryptionContext: context });
  return result.toString('base64');
}

/**
 * Decrypts what `encryptSecret` returned. Throws when the ciphertext was tampered with, was made by another
 * key, or carries a different encryption context than `context`.
 */
export async function decryptSecret(ciphertext: string, context: EncryptionContext): Promise<string> {
  const { plaintext, messageHeader } = await decrypt(getKeyring(), Buffer.from(ciphertext, 'base64'));
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
