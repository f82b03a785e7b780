/**
 * Keys of the local stack and the tests, kept in one JSON file under the data folder: a raw AES-256 wrapping key
 * for the AWS Encryption SDK's raw AES keyring, and the page-token signing secret. In AWS the same roles are
 * played by the KMS key and a Secrets Manager secret.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface LocalKeys {
  /** 32 bytes, base64. */
  aesKey: string;
  /** 32 bytes, base64. */
  pageTokenSecret: string;
}

/** Creates the file with fresh random keys when it does not exist (mode 0600); returns its keys. */
export function ensureLocalKeysFile(file: string): LocalKeys {
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const keys: LocalKeys = {
      aesKey: randomBytes(32).toString('base64'),
      pageTokenSecret: randomBytes(32).toString('base64'),
    };
    writeFileSync(file, JSON.stringify(keys, null, 2), { mode: 0o600, flag: 'wx' });
  }
  return readLocalKeys(file);
}

/** Reads the keys; throws when the file is missing or malformed. */
export function readLocalKeys(file: string): LocalKeys {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalKeys>;
  if (typeof parsed.aesKey !== 'string' || typeof parsed.pageTokenSecret !== 'string') {
    throw new Error(`Local keys file ${file} is malformed: expected aesKey and pageTokenSecret.`);
  }
  if (Buffer.from(parsed.aesKey, 'base64').length !== 32) {
    throw new Error(`Local keys file ${file}: aesKey must be 32 bytes (base64).`);
  }
  return { aesKey: parsed.aesKey, pageTokenSecret: parsed.pageTokenSecret };
}
