/**
 * Signed page tokens. A token carries the position to resume from (a DynamoDB key, or any small cursor), the
 * tenant it was issued to, a hash of the query that produced it, and an expiry (24 h). It is signed with
 * HMAC-SHA256 under a server secret (shared/db/server-secret.ts): a token that was altered, issued to another
 * tenant, made for another query, or expired is rejected with INVALID_ARGUMENT. Tokens are signed with the
 * secret's current value and accepted under its current or previous one, so a rotation breaks no token.
 */
import { createHash, createHmac } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json';
import { PAGE_TOKEN_SECRET, cachedServerSecret, verifiesWithServerSecret, type ServerSecret } from './server-secret';
import { InvalidArgumentError } from '../core/errors';
import { hashesEqual } from '../crypto/tokens';

const TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;
const INVALID = 'Invalid page token.';

/** Who asked and what they asked: a token is only valid for the same scope. */
export interface PageScope {
  /** API key id or workspace id. */
  tenant: string;
  /** The operation and its filters (never pageSize or pageToken). */
  query: unknown;
}

export type Cursor = Record<string, unknown>;

interface Payload {
  t: string;
  q: string;
  c: Cursor;
  e: number;
}

/** The signing secret, cached per process (see cachedServerSecret). */
const getSecret = (now = Date.now()): Promise<ServerSecret> => cachedServerSecret(PAGE_TOKEN_SECRET, now);

function queryHash(query: unknown): string {
  return createHash('sha256').update(canonicalJson(query)).digest('base64url');
}

function sign(secret: Buffer, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64url');
}

/** Issues a token that resumes `scope`'s query at `cursor`. */
export async function createPageToken(scope: PageScope, cursor: Cursor, now = Date.now()): Promise<string> {
  const payload: Payload = { t: scope.tenant, q: queryHash(scope.query), c: cursor, e: now + TOKEN_LIFETIME_MS };
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${sign((await getSecret(now)).current, body)}`;
}

/** Returns the cursor of a token issued for `scope`. Throws InvalidArgumentError for any other token. */
export async function readPageToken(token: string, scope: PageScope, now = Date.now()): Promise<Cursor> {
  const [body, signature, ...rest] = token.split('.');
  if (!body || !signature || rest.length > 0) throw new InvalidArgumentError(INVALID);
  if (
    !(await verifiesWithServerSecret(PAGE_TOKEN_SECRET, (value) => hashesEqual(signature, sign(value, body)), { now }))
  ) {
    throw new InvalidArgumentError(INVALID);
  }
  let payload: Payload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
  } catch {
    throw new InvalidArgumentError(INVALID);
  }
  if (payload.t !== scope.tenant || payload.q !== queryHash(scope.query)) {
    throw new InvalidArgumentError('Page token does not belong to this query.');
  }
  if (typeof payload.e !== 'number' || payload.e < now) throw new InvalidArgumentError('Page token has expired.');
  if (payload.c === null || typeof payload.c !== 'object') throw new InvalidArgumentError(INVALID);
  return payload.c;
}

/**
 * How every listing reads its token: the position the page resumes after (the listing's own cursor: a sort key or
 * an id), or undefined without a token. Throws InvalidArgumentError for a token not issued for `scope`, altered,
 * expired, or carrying no position.
 */
export async function readPageAfter(token: string | undefined, scope: PageScope): Promise<string | undefined> {
  if (token === undefined) return undefined;
  const cursor = await readPageToken(token, scope);
  if (typeof cursor.after !== 'string') throw new InvalidArgumentError(INVALID);
  return cursor.after;
}

/** How every listing makes its token: one that resumes `scope` after `after`, or none at the end (no `after`). */
export async function pageTokenAfter(scope: PageScope, after: string | undefined): Promise<string | undefined> {
  return after === undefined ? undefined : createPageToken(scope, { after });
}
