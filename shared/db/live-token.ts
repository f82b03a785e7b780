/**
 * Live-sync session tokens (decisions §13). `/v2/crdt/live/authorize` issues one for one user on one editor; the
 * browser presents it when it opens its WebSocket. A token names the API key, organization, document, editor and
 * user, and when it expires; it is signed with HMAC-SHA256 under a server secret of its own (shared/db/server-secret.ts,
 * `live-token`), so it cannot be altered or made up, and a rotation breaks no token (the previous value verifies).
 * It grants nothing by itself: the user's stored access is resolved again whenever the token is used.
 *
 * Format: `<payload>.<signature>`, both base64url; the payload is JSON. Clients treat it as opaque.
 */
import { createHmac } from 'node:crypto';
import { hashesEqual } from '../crypto/tokens';
import { LIVE_TOKEN_SECRET, cachedServerSecret, verifiesWithServerSecret } from './server-secret';

/** What a session token is bound to. */
export interface LiveSession {
  apiKeyId: string;
  organizationId: string;
  documentId: string;
  editorId: string;
  userId: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

interface Payload {
  k: string;
  o: string;
  d: string;
  e: string;
  u: string;
  x: number;
}

/** Why a token is refused: said to the client in the auth message, so it can tell "ask again" from "broken". */
export class LiveTokenError extends Error {
  constructor(
    message: string,
    /** `expired`: a new token from the customer's server helps; `invalid`: it does not. */
    readonly reason: 'expired' | 'invalid',
  ) {
    super(message);
  }
}

/** Domain separation: a signature made for another kind of token never verifies here. */
const sign = (secret: Buffer, body: string) =>
  createHmac('sha256', secret).update(`live-session.${body}`).digest('base64url');

export async function createLiveToken(session: LiveSession): Promise<string> {
  const payload: Payload = {
    k: session.apiKeyId,
    o: session.organizationId,
    d: session.documentId,
    e: session.editorId,
    u: session.userId,
    x: session.expiresAt,
  };
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return `${body}.${sign((await cachedServerSecret(LIVE_TOKEN_SECRET)).current, body)}`;
}

const isString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** The session a token names. Throws LiveTokenError when it was altered, not made by this service, or has expired. */
export async function readLiveToken(token: string, now = Date.now()): Promise<LiveSession> {
  const invalid = new LiveTokenError('Invalid session token.', 'invalid');
  const [body, signature, ...rest] = token.split('.');
  if (!body || !signature || rest.length > 0 || token.length > 4096) throw invalid;
  // A miss reads the secret again: the connect handler must not refuse a token the authorize route signed with a
  // value newer than its cache (decisions §13: a rotation breaks no token).
  const valid = await verifiesWithServerSecret(
    LIVE_TOKEN_SECRET,
    (value) => hashesEqual(signature, sign(value, body)),
    { now, rereadOnMiss: true },
  );
  if (!valid) throw invalid;
  let payload: Partial<Payload>;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Payload>;
  } catch {
    throw invalid;
  }
  const { k, o, d, e, u, x } = payload;
  if (!isString(k) || !isString(o) || !isString(d) || !isString(e) || !isString(u) || typeof x !== 'number')
    throw invalid;
  if (x <= now) throw new LiveTokenError('The session token has expired; ask your server for a new one.', 'expired');
  return { apiKeyId: k, organizationId: o, documentId: d, editorId: e, userId: u, expiresAt: x };
}
