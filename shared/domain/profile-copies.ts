/**
 * Profile copies on memberships (docs/architecture.md, Get Users in "Access patterns"). A user's `name`, `email` and
 * `initial` belong to the profile (shared/db/profile.ts); every membership carries a copy, so Get Users answers a
 * page from the membership items alone.
 *
 * Who keeps the copies in step:
 * - Add Users and Update Users write the copy of the level they name in the same transaction as the profile, so a
 *   Get Users of that level right after the answer shows the write (read your writes). The transaction is
 *   conditional on the profile's version being the one the request read: a write that changed the profile
 *   meanwhile fails it, and the request reads again and retries (shared/domain/users.ts).
 * - They then bring the user's other memberships in step themselves, up to `COPIES_IN_REQUEST` entries of the user
 *   (all of them for a user in a few organizations and documents).
 * - The profile-copies consumer (shared/domain/stream/profile-copies.ts), handed by the stream each profile change
 *   and each new membership, brings every membership of the user in step with the profile as it then reads it. It
 *   covers users with more entries than a request handles and requests that stopped before their copies. Until it
 *   has run (about a second in AWS), a listing of another level may show the previous values.
 *
 * Copies are versioned: each carries the version of the profile it was made from (shared/db/profile.ts), and a
 * copy is written only over an older one, conditionally (writeProfileCopy). A consumer that read the profile
 * before a request changed it, or a stream record handed again or out of order (records of one item come in
 * order, but a batch is retried whole and consumers of different shards run side by side), can therefore never
 * put an older name over the newer one a request has just written and answered.
 */
import { forEachLimited } from '../core/concurrency';
import {
  copyOf,
  membershipCopiesOfUser,
  replacesCopy,
  sameCopy,
  versionedCopyOf,
  writeProfileCopy,
  type MembershipCopy,
  type VersionedCopy,
} from '../db/membership';
import type { ItemChange } from '../db/item-change';
import { getProfiles, type Profile } from '../db/profile';

/** Entries of a user (memberships, grants, group memberships) a write request examines to update copies. */
export const COPIES_IN_REQUEST = 100;

/** Entries read per query when the worker goes through a user's entries. */
const ENTRIES_PER_QUERY = 500;

/** Copy writes of one user in flight at once. */
const WRITES_AT_ONCE = 10;

/** The copy a membership carries of a profile, with the profile's version (no profile: no fields, version 0). */
export const copyOfProfile = (profile: Profile | undefined): VersionedCopy =>
  versionedCopyOf({ ...(profile ?? {}), profileVersion: profile?.version ?? 0 });

/**
 * Writes `copy` to every membership of the user whose copy is older (replacesCopy), examining at most `maxEntries`
 * of the user's entries; a copy found newer meanwhile is kept. True when it reached the last entry.
 */
export async function syncProfileCopies(
  apiKeyId: string,
  userId: string,
  copy: VersionedCopy,
  maxEntries = Infinity,
): Promise<boolean> {
  let cursor: Record<string, unknown> | undefined;
  let examined = 0;
  do {
    const limit = Math.min(ENTRIES_PER_QUERY, maxEntries - examined);
    const page = await membershipCopiesOfUser(apiKeyId, userId, limit, cursor);
    examined += limit;
    // The index may trail the table, but only with older copies: the conditional write decides.
    const stale = page.memberships.filter((membership) => replacesCopy(membership, copy));
    await forEachLimited(stale, WRITES_AT_ONCE, (membership) => writeProfileCopy(membership, copy));
    cursor = page.cursor;
  } while (cursor !== undefined && examined < maxEntries);
  return cursor === undefined;
}

/** What the worker is woken for: a user whose profile changed, or a membership just added (with its copy). */
export type CopyChange =
  | { kind: 'profile'; apiKeyId: string; userId: string }
  | { kind: 'membership'; apiKeyId: string; userId: string; membership: MembershipCopy };

/** What a change (as the stream decoder names it) asks of the consumer: nothing for a profile written with the same name, email and initial. */
export function copyChangeOf({ eventName, kind, apiKeyId, newImage, oldImage }: ItemChange): CopyChange | undefined {
  if (newImage === undefined) return undefined;
  const userId = newImage.userId;
  if (apiKeyId === undefined || typeof userId !== 'string') return undefined;
  if (kind === 'profile')
    return sameCopy(copyOf(oldImage ?? {}), copyOf(newImage)) ? undefined : { kind: 'profile', apiKeyId, userId };
  if (eventName === 'INSERT' && kind === 'membership') {
    return {
      kind: 'membership',
      apiKeyId,
      userId,
      membership: { pk: String(newImage.pk), sk: String(newImage.sk), ...versionedCopyOf(newImage) },
    };
  }
  return undefined;
}

/** Users handled side by side in one tenant. */
const USERS_AT_ONCE = 10;

/**
 * Brings copies in step with the profiles as read now (consistently): every membership of a user whose profile
 * changed, and each added membership whose copy is older than its user's profile. A profile read here may be
 * older than a copy a request writes before these writes land; the copies' versions keep that copy. Tenants side
 * by side.
 */
export async function keepCopiesInStep(changes: readonly CopyChange[]): Promise<void> {
  const byTenant = new Map<string, CopyChange[]>();
  for (const change of changes) byTenant.set(change.apiKeyId, [...(byTenant.get(change.apiKeyId) ?? []), change]);
  await Promise.all(
    [...byTenant].map(async ([apiKeyId, tenantChanges]) => {
      const profiles = await getProfiles(apiKeyId, [...new Set(tenantChanges.map((change) => change.userId))], {
        consistent: true,
      });
      const changedUsers = new Set(
        tenantChanges.filter((change) => change.kind === 'profile').map((change) => change.userId),
      );
      const added = tenantChanges.flatMap((change) =>
        change.kind === 'membership' && !changedUsers.has(change.userId) ? [change] : [],
      );
      await forEachLimited([...changedUsers], USERS_AT_ONCE, async (userId) => {
        await syncProfileCopies(apiKeyId, userId, copyOfProfile(profiles.get(userId)));
      });
      await forEachLimited(added, WRITES_AT_ONCE, async ({ userId, membership }) => {
        const copy = copyOfProfile(profiles.get(userId));
        if (replacesCopy(membership, copy)) await writeProfileCopy(membership, copy);
      });
    }),
  );
}
