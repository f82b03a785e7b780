/**
 * User profiles: `name`, `email` and `initial` belong to the user in the tenant and are shared by every level
 * (docs/decisions.md §4); roles live on memberships (shared/db/membership.ts).
 *
 *   pk T#<key>#USER#<userId>   sk PROFILE   userId, name, email, initial, version
 *
 * `version` counts the changes of name, email and initial (1 for a new profile; absent, read as 0, on a profile
 * written before versions). Every copy of the profile on a membership carries the version it was made from
 * (shared/db/membership.ts), so a copy never replaces a newer one (shared/domain/profile-copies.ts). A write
 * that copies the profile is conditional on the version it read: if another write changed the profile meanwhile,
 * the copy would be of a profile that no longer exists, so the write fails with ProfileChangedError and is retried
 * on a fresh read.
 */
import { createHash } from 'node:crypto';
import { batchGet } from './batch';
import { TABLE_NAME } from './client';
import { PROFILE_SORT_KEY, segment, tenantKey } from './keys';
import { withoutUndefined } from '../core/objects';
import { AbortedError } from '../core/errors';
import { named, type TransactItem } from './transact';

export interface Profile {
  userId: string;
  name?: string;
  email?: string;
  initial?: string;
  /** Changes of name, email and initial so far; 0 for a profile written before versions. */
  version?: number;
}

/**
 * The profile changed between the read a write copied it from and the write (the write's condition failed): the
 * write is retried on a fresh read; a request that keeps meeting concurrent changes answers ABORTED.
 */
export class ProfileChangedError extends AbortedError {
  constructor() {
    super('The user changed during the request; retry it.');
    this.name = 'ProfileChangedError';
  }
}

export { PROFILE_SORT_KEY } from './keys';

export const profileKey = (apiKeyId: string, userId: string) => ({
  pk: tenantKey(apiKeyId, 'USER', segment(userId)),
  sk: PROFILE_SORT_KEY,
});

/** The stable opaque id of a user in the tenant (Add Users' per-item `id`): the same for every call. */
export function stableUserId(apiKeyId: string, userId: string): string {
  return `usr_${createHash('sha256').update(`${apiKeyId}\u0000${userId}`).digest('hex').slice(0, 24)}`;
}

/** `initial` when given, else the first letter of `name` upper-cased (docs/decisions.md §4), else nothing to change. */
export function initialFor(fields: { name?: string; initial?: string }): string | undefined {
  if (fields.initial !== undefined) return fields.initial;
  const first = fields.name?.trim().charAt(0);
  return first ? first.toUpperCase() : undefined;
}

const storedVersion = (profile: Profile | undefined) => profile?.version ?? 0;

/**
 * The profile as it is after `upsertProfileItem(stored, input)` is applied to `stored` (undefined: no profile yet),
 * with its version: one more than the stored one when name, email or initial change (or the profile is new).
 */
export function profileAfter(stored: Profile | undefined, input: Profile): Profile & { version: number } {
  const after: Profile = withoutUndefined({
    userId: input.userId,
    name: input.name ?? stored?.name,
    email: input.email ?? stored?.email,
    initial: initialFor(input) ?? stored?.initial,
  });
  const changed =
    stored === undefined || (['name', 'email', 'initial'] as const).some((field) => after[field] !== stored[field]);
  return { ...after, version: storedVersion(stored) + (changed ? 1 : 0) };
}

/**
 * Creates the profile when missing and sets the given fields (fields not given keep their stored values) and the
 * version, as profileAfter(stored, profile) computes them. Conditional on the profile being as read (`stored`,
 * undefined when there was none): its condition failing means ProfileChangedError.
 */
export function upsertProfileItem(apiKeyId: string, stored: Profile | undefined, profile: Profile): TransactItem {
  const fields: Record<string, string | undefined> = {
    name: profile.name,
    email: profile.email,
    initial: initialFor(profile),
  };
  const names: Record<string, string> = { '#userId': 'userId', '#version': 'version' };
  const values: Record<string, unknown> = {
    ':userId': profile.userId,
    ':version': profileAfter(stored, profile).version,
  };
  const sets = ['#userId = :userId', '#version = :version'];
  // No profile, or one written before versions: no version yet. Otherwise the version read.
  const version = storedVersion(stored);
  const condition = version === 0 ? 'attribute_not_exists(#version)' : '#version = :read';
  if (version !== 0) values[':read'] = version;
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: profileKey(apiKeyId, profile.userId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    () => new ProfileChangedError(),
  );
}

/**
 * Profiles of `userIds` that exist, keyed by user id (one BatchGet per 100). Eventually consistent unless
 * `consistent` (writes that copy the profile read it consistently).
 */
export async function getProfiles(
  apiKeyId: string,
  userIds: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, Profile>> {
  const items = await batchGet(
    userIds.map((userId) => profileKey(apiKeyId, userId)),
    { consistent: options.consistent ?? false },
  );
  return new Map(
    items.map((item) => [
      String(item.userId),
      {
        userId: String(item.userId),
        name: item.name as string | undefined,
        email: item.email as string | undefined,
        initial: item.initial as string | undefined,
        version: typeof item.version === 'number' ? item.version : 0,
      },
    ]),
  );
}
