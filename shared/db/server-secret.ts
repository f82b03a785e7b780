/**
 * Server secrets that only the service itself uses (the page-token and live-token signing keys), kept in the table:
 *
 *   pk SYSTEM   sk SECRET#<name>   value (current: 32 random bytes, base64)   previous? (the one before)
 *
 * Who may do what (the grants of shared/grants.ts hold it in AWS):
 * - the deploy task (functions/deploy/server-secrets.ts) creates each secret, once, with a conditional put, so
 *   the secret exists before the first request: the routes that sign and check page tokens are read-only;
 * - request paths only read it (`readServerSecret`);
 * - the operator rotates it (`npm run admin -- rotate-page-token-key`): the current value becomes `previous`,
 *   which still verifies, so tokens issued before the rotation keep working until they expire.
 * Only the service's functions can read the table, and they can already read every item a page token points into;
 * tenants never see the item.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, segment } from './keys';

/** The secret that signs page tokens (shared/db/page-token.ts). */
export const PAGE_TOKEN_SECRET = 'page-token';
/** The secret that signs live-sync session tokens (shared/db/live-token.ts). */
export const LIVE_TOKEN_SECRET = 'live-token';

/** Every server secret the deploy task creates. */
export const SERVER_SECRETS: readonly string[] = [PAGE_TOKEN_SECRET, LIVE_TOKEN_SECRET];

export interface ServerSecret {
  /** Signs, and verifies. */
  readonly current: Buffer;
  /** The value before the last rotation: verifies only. */
  readonly previous?: Buffer;
}

const secretKey = (name: string) => ({ pk: 'SYSTEM', sk: key('SECRET', segment(name)) });

function newValue(): string {
  return randomBytes(32).toString('base64');
}

/**
 * The secret called `name`. Throws when it does not exist: it is created at deployment (or by the local stack
 * before it serves), and a request path may not create it.
 */
export async function readServerSecret(name: string): Promise<ServerSecret> {
  const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: secretKey(name), ConsistentRead: true }));
  if (typeof Item?.value !== 'string') {
    throw new Error(
      `The server secret "${name}" does not exist. The deployment creates it (custom resource ServerSecrets); ` +
        'run `npm run admin -- rotate-page-token-key` to create it by hand.',
    );
  }
  return {
    current: Buffer.from(Item.value, 'base64'),
    ...(typeof Item.previous === 'string' ? { previous: Buffer.from(Item.previous, 'base64') } : {}),
  };
}

/** Creates the secret called `name` unless it exists; an existing secret is left as it is. Returns whether it created it. */
export async function ensureServerSecret(name: string, now = Date.now()): Promise<boolean> {
  const written = await unlessConditionFails(
    db.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: { ...secretKey(name), value: newValue(), createdAt: now },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
  return written !== undefined;
}

/**
 * Gives the secret called `name` a new value and keeps the old one as `previous` (the one before it is dropped).
 * Creates the secret when it does not exist.
 */
export async function rotateServerSecret(name: string, now = Date.now()): Promise<void> {
  const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: secretKey(name), ConsistentRead: true }));
  const current = typeof Item?.value === 'string' ? Item.value : undefined;
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: {
        ...secretKey(name),
        value: newValue(),
        ...(current === undefined ? {} : { previous: current }),
        createdAt: Item?.createdAt ?? now,
        rotatedAt: now,
      },
      // Two operators rotating at once: the second fails instead of dropping a value that may be signing tokens.
      ConditionExpression: current === undefined ? 'attribute_not_exists(pk)' : '#value = :current',
      ...(current === undefined
        ? {}
        : { ExpressionAttributeNames: { '#value': 'value' }, ExpressionAttributeValues: { ':current': current } }),
    }),
  );
}

/**
 * How long a process keeps a secret it read: a rotation reaches every warm function within this time, and signing
 * or checking tokens costs one GetItem per function per interval, not per request.
 */
const SECRET_CACHE_MS = 5 * 60 * 1000;

const cache = new Map<string, { secret: Promise<ServerSecret>; readAt: number }>();

/** The secret called `name`, read at most once per SECRET_CACHE_MS per process; a failed read is retried on the next call. */
export function cachedServerSecret(name: string, now = Date.now()): Promise<ServerSecret> {
  const cached = cache.get(name);
  if (cached !== undefined && now - cached.readAt <= SECRET_CACHE_MS) return cached.secret;
  const secret = readServerSecret(name);
  const entry = { secret, readAt: now };
  cache.set(name, entry);
  secret.catch(() => {
    if (cache.get(name) === entry) cache.delete(name);
  });
  return secret;
}

/**
 * How soon after a failed check a process reads a secret again (`rereadOnMiss`). Its cache learns of a rotation
 * only minutes later, while another function (a freshly started instance) may already sign with the new value.
 * Bounded, so made-up tokens cost at most one read per interval.
 */
const REREAD_AFTER_MISS_MS = 10_000;
const rereads = new Map<string, { secret: Promise<ServerSecret>; readAt: number }>();

/**
 * Whether `signedWith` holds for the secret's current or previous value (a token signed before a rotation still
 * verifies). With `rereadOnMiss`, a miss reads the secret again (at most once per REREAD_AFTER_MISS_MS per process),
 * so a token signed with a value newer than this process's cache is not refused.
 */
export async function verifiesWithServerSecret(
  name: string,
  signedWith: (value: Buffer) => boolean,
  options: { now?: number; rereadOnMiss?: boolean } = {},
): Promise<boolean> {
  const now = options.now ?? Date.now();
  const matches = (secret: ServerSecret) =>
    [secret.current, secret.previous].some((value) => value !== undefined && signedWith(value));
  if (matches(await cachedServerSecret(name, now))) return true;
  if (options.rereadOnMiss !== true) return false;
  let reread = rereads.get(name);
  if (reread === undefined || Math.abs(now - reread.readAt) > REREAD_AFTER_MISS_MS) {
    const entry = { secret: readServerSecret(name), readAt: now };
    reread = entry;
    rereads.set(name, entry);
    entry.secret.catch(() => {
      if (rereads.get(name) === entry) rereads.delete(name);
    });
  }
  return matches(await reread.secret);
}
