/**
 * User profiles: `name`, `email` and `initial` belong to the user in the tenant and are shared by every level
 * (docs/decisions.md §4); roles live on memberships (shared/db/membership.ts).
 *
 *   pk T#<key>#USER#<userId>   sk PROFILE   userId, name, email, initial
 */
import { createHash } from 'node:crypto';
import { batchGet } from './batch';
import { TABLE_NAME } from './client';
import { PROFILE_SORT_KEY, segment, tenantKey } from './keys';
import { withoutUndefined } from '../core/objects';
import type { TransactItem } from './transact';

export interface Profile {
  userId: string;
  name?: string;
  email?: string;
  initial?: string;
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

/** The profile as it is after `upsertProfileItem(input)` is applied to `stored` (undefined: no profile yet). */
export function profileAfter(stored: Profile | undefined, input: Profile): Profile {
  return withoutUndefined({
    userId: input.userId,
    name: input.name ?? stored?.name,
    email: input.email ?? stored?.email,
    initial: initialFor(input) ?? stored?.initial,
  });
}

/** Creates the profile when missing and sets the given fields; fields not given keep their stored values. */
export function upsertProfileItem(apiKeyId: string, profile: Profile): TransactItem {
  const fields: Record<string, string | undefined> = {
    name: profile.name,
    email: profile.email,
    initial: initialFor(profile),
  };
  const names: Record<string, string> = { '#userId': 'userId' };
  const values: Record<string, unknown> = { ':userId': profile.userId };
  const sets = ['#userId = :userId'];
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: profileKey(apiKeyId, profile.userId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Profiles of `userIds` that exist, keyed by user id (one BatchGet per 100). Eventually consistent unless
 * `consistent` (writes that copy the profile read it consistently).
 */
export async function getProfiles(apiKeyId: string, userIds: readonly string[], options: { consistent?: boolean } = {}): Promise<Map<string, Profile>> {
  const items = await batchGet(userIds.map((userId) => profileKey(apiKeyId, userId)), { consistent: options.consistent ?? false });
  return new Map(
    items.map((item) => [
      String(item.userId),
      { userId: String(item.userId), name: item.name as string | undefined, email: item.email as string | undefined, initial: item.initial as string | undefined },
    ]),
  );
}
