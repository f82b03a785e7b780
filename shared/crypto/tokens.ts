/** Random identifiers and secrets, and their hashes. */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A secret token: 32 random bytes (256 bits), base64url. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * A new identifier: a millisecond timestamp (so ids sort by creation) followed by 80 random bits; lower-case
 * hex, safe in URLs and keys. `prefix` tells a reader what kind of id it is (`ws_`, `key_`).
 */
export function newId(prefix = ''): string {
  const time = Date.now().toString(16).padStart(12, '0');
  return `${prefix}${time}${randomBytes(10).toString('hex')}`;
}

/** SHA-256 of a secret, base64url: what is stored and looked up instead of the secret. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('base64url');
}

/** Compares two hashes in constant time (different lengths compare unequal without a timing signal on content). */
export function hashesEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}
