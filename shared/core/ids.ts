/**
 * Server-made ids that sort by creation time (the advanced webhook endpoints' `ep_…`): a prefix, the creation
 * time in milliseconds as 10 Crockford base32 characters, then 16 random ones (80 bits), as ULIDs are built. Ids
 * made in the same millisecond sort in random order among themselves.
 */
import { createHash, randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

function base32(value: number, width: number): string {
  let rest = value;
  let text = '';
  for (let i = 0; i < width; i += 1) {
    text = CROCKFORD[rest % 32] + text;
    rest = Math.floor(rest / 32);
  }
  return text;
}

/** `<prefix><time><random>`: 26 characters after the prefix, in creation order. */
export function timeOrderedId(prefix: string, now = Date.now()): string {
  const random = [...randomBytes(RANDOM_CHARS)].map((byte) => CROCKFORD[byte % 32]).join('');
  return `${prefix}${base32(now, TIME_CHARS)}${random}`;
}

/** The characters after the prefix of a time-ordered id, as a regular expression source (no anchors). */
export const TIME_ORDERED_ID_BODY = `[${CROCKFORD}]{${TIME_CHARS + RANDOM_CHARS}}`;

/** Whether `id` has the shape timeOrderedId gives with `prefix`. */
export function isTimeOrderedId(prefix: string, id: string): boolean {
  return id.startsWith(prefix) && new RegExp(`^${TIME_ORDERED_ID_BODY}$`).test(id.slice(prefix.length));
}

/**
 * An id derived from `parts` (SHA-256, 26 Crockford base32 characters after the prefix): the same parts always
 * give the same id, so what is made from a cause seen twice is made once.
 */
export function derivedId(prefix: string, ...parts: readonly string[]): string {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  return `${prefix}${[...digest.subarray(0, TIME_CHARS + RANDOM_CHARS)].map((byte) => CROCKFORD[byte % 32]).join('')}`;
}
