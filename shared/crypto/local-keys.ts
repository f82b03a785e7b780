/**
 * The key of the local stack and the tests, kept in a JSON file under the data folder: a raw AES-256 wrapping key
 * for the AWS Encryption SDK's raw AES keyring. In AWS the KMS key plays that role.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export interface LocalKeys {
  /** 32 bytes, base64. */
  aesKey: string;
}

/** Creates the file with fresh random keys when it does not exist (mode 0600); returns its keys. */
export function ensureLocalKeysFile(file: string): LocalKeys {
  if (!existsSync(file)) {
    // The key decrypts every tenant's secrets: its folder, when created here, is for its owner only.
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const keys: LocalKeys = { aesKey: randomBytes(32).toString('base64') };
    writeFileSync(file, JSON.stringify(keys, null, 2), { mode: 0o600, flag: 'wx' });
  }
  return readLocalKeys(file);
}

/** Reads the keys; throws when the file is missing or malformed. */
export function readLocalKeys(file: string): LocalKeys {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalKeys>;
  if (typeof parsed.aesKey !== 'string') {
    throw new Error(`Local keys file ${file} is malformed: expected aesKey.`);
  }
  if (Buffer.from(parsed.aesKey, 'base64').length !== 32) {
    throw new Error(`Local keys file ${file}: aesKey must be 32 bytes (base64).`);
  }
  return { aesKey: parsed.aesKey };
}
