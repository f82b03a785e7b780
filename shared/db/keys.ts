/**
 * Key encoding. Entity modules build every key from segments with `key(...)`; nothing else writes key strings.
 *
 * A client id becomes a segment by percent-encoding `%`, `#` and `~`, so a `#` in a key is always a separator and
 * `a#b` can never collide with the pair `a`, `b`. A segment whose encoded form is long is replaced by `~` and the
 * SHA-256 of the id: `~` never begins an encoded id, so the two forms cannot collide either, and a key built of a
 * few 256-character ids (up to 4 bytes per character) stays inside DynamoDB's 1024-byte sort-key limit.
 */
import { createHash } from 'node:crypto';

export const SEPARATOR = '#';
/** Encoded segments longer than this (in UTF-8 bytes) are hashed. */
const MAX_SEGMENT_BYTES = 128;

/** Encodes one client-supplied id as a key segment. */
export function segment(id: string): string {
  const escaped = id.replace(/[%#~]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
  if (Buffer.byteLength(escaped, 'utf8') <= MAX_SEGMENT_BYTES) return escaped;
  return `~${createHash('sha256').update(id, 'utf8').digest('base64url')}`;
}

/** Joins already-encoded parts (entity tags such as `KEY` and segments from `segment`). */
export function key(...parts: string[]): string {
  return parts.join(SEPARATOR);
}

/** Prefix for `begins_with` queries over the children of a key: always ends with the separator. */
export function prefix(...parts: string[]): string {
  return `${key(...parts)}${SEPARATOR}`;
}

/** Partition key of tenant data: every key of customer data starts with the API key id (docs/design.md, Storage). */
export function tenantKey(apiKeyId: string, ...parts: string[]): string {
  return key('T', segment(apiKeyId), ...parts);
}

/** Digits of a millisecond timestamp as a key part: enough for any date before the year 33658. */
export const TIMESTAMP_DIGITS = 15;

/**
 * A non-negative integer as a key part that sorts like the number: zero-padded to `digits` (a millisecond
 * timestamp by default). Only integers below 10^digits keep their order.
 */
export function sortableNumber(value: number, digits = TIMESTAMP_DIGITS): string {
  return String(value).padStart(digits, '0');
}

/**
 * The API key id a tenant key (`tenantKey`) was built from, or undefined for a key of no tenant. API key ids are
 * server-made and short, so their segment is never the hashed form.
 */
export function apiKeyIdOfKey(pk: string): string | undefined {
  const [tag, encoded] = pk.split(SEPARATOR);
  if (tag !== 'T' || encoded === undefined || encoded === '' || encoded.startsWith('~')) return undefined;
  return encoded.replace(/%(25|23|7E)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The sort key of every profile (shared/db/profile.ts; the stream decoder names profiles by it). */
export const PROFILE_SORT_KEY = 'PROFILE';
