/**
 * User group rules (docs/decisions.md §4 and §10): groups live in an existing organization (created on request), adding
 * a group again renames it, members are added to and removed from a group that must exist.
 */
import { batchWriteEach, deleteRequest, putRequest } from '../db/batch';
import { organizationExists, ensureOrganizationItem } from '../db/organization';
import { putItem } from '../db/transact';
import {
  getGroup,
  groupItem,
  groupMemberItem,
  groupMemberKey,
  groupMembersAmong,
  queryGroupMembers,
  type UserGroup,
} from '../db/user-group';
import { batchResult, notWritten, reportOf, type BatchResult, type ItemFailure } from './batch-result';
import { NotFoundError } from '../core/errors';
import { writeGroupsGuarded } from './document-locks';

/** A user's item in Add Users to Group and Delete Users from Group: the group, unless not written. */
export type MemberResult = { success: boolean; organizationUserGroupId: string; message: string };

/** Members read (and deleted) per round of a deleteAll: well under a 1 MB query page. */
const DELETE_ALL_PAGE = 500;

/**
 * Creates or renames each group. Without `createOrganization` a missing organization fails the request with
 * NOT_FOUND before anything is written; with it the organization is created first.
 */
export async function addGroups(
  apiKeyId: string,
  organizationId: string,
  groups: ReadonlyArray<Omit<UserGroup, 'organizationId'>>,
  createOrganization: boolean,
  now = Date.now(),
): Promise<BatchResult<{ success: true; id: string; message: string } | ItemFailure>> {
  if (!createOrganization && !(await organizationExists(apiKeyId, organizationId)))
    throw new NotFoundError('Organization not found.');
  // Puts replace: a group sent again takes the new name, so a retried request ends in the same state. The
  // organization is created in the first transaction, so a request that writes no group creates nothing.
  const report = await reportOf(
    writeGroupsGuarded(
      apiKeyId,
      groups.map((group) => ({ items: [putItem(groupItem(apiKeyId, { ...group, organizationId }))], documents: [] })),
      { items: createOrganization ? [ensureOrganizationItem(apiKeyId, organizationId, now)] : [], documents: [] },
    ),
  );
  return batchResult(
    groups.map((group, i) => ({ group, i })),
    ({ group }) => group.groupId,
    ({ group, i }) =>
      report.written(i)
        ? { success: true, id: group.groupId, message: 'User group added.' }
        : notWritten(report.failure),
  );
}

/** Throws NotFoundError when the organization has no such group (in this tenant). */
async function requireGroup(apiKeyId: string, organizationId: string, groupId: string): Promise<void> {
  if (!(await getGroup(apiKeyId, organizationId, groupId))) throw new NotFoundError('User group not found.');
}

/** Adds the users to the group (adding a member again changes nothing). Throws NotFoundError for an unknown group. */
export async function addGroupMembers(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
  userIds: readonly string[],
): Promise<BatchResult<MemberResult | ItemFailure>> {
  await requireGroup(apiKeyId, organizationId, groupId);
  const report = await reportOf(
    batchWriteEach(userIds.map((userId) => putRequest(groupMemberItem(apiKeyId, organizationId, groupId, userId)))),
  );
  return batchResult(
    userIds.map((userId, i) => ({ userId, i })),
    ({ userId }) => userId,
    ({ i }) =>
      report.written(i)
        ? { success: true, organizationUserGroupId: groupId, message: 'User added to group.' }
        : notWritten(report.failure),
  );
}

/** Which members to remove: the listed users, or every member. */
export type MembersToRemove = { userIds: readonly string[] } | { all: true };

/**
 * Removes members from the group and reports each listed user (removed, or not a member) or, for `all`, each
 * user removed. Throws NotFoundError for an unknown group. When a write stops part way, the users removed are
 * answered success and the others of the failed batch not written (for `all`, the pages after it are not read).
 */
export async function removeGroupMembers(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
  members: MembersToRemove,
): Promise<BatchResult<MemberResult | ItemFailure>> {
  await requireGroup(apiKeyId, organizationId, groupId);
  const outcome =
    'all' in members
      ? await removeAllMembers(apiKeyId, organizationId, groupId)
      : await removeListedMembers(apiKeyId, organizationId, groupId, members.userIds);
  const listed = 'all' in members ? [...outcome.removed, ...outcome.notRemoved] : members.userIds;
  const removed = new Set(outcome.removed);
  const notRemoved = new Set(outcome.notRemoved);
  return batchResult(
    listed,
    (userId) => userId,
    (userId) =>
      removed.has(userId)
        ? { success: true, organizationUserGroupId: groupId, message: 'User removed from group.' }
        : notRemoved.has(userId)
          ? notWritten(outcome.failure)
          : { success: false, organizationUserGroupId: groupId, message: 'User is not in the group.' },
  );
}

/** Who a removal took out of the group, who it meant to but could not (a write stopped part way), and why. */
interface Removal {
  removed: string[];
  notRemoved: string[];
  failure?: unknown;
}

/** Deletes the memberships of `userIds` (all members); throws when none could be deleted. */
async function removeMembers(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
  userIds: readonly string[],
): Promise<Removal> {
  const report = await reportOf(
    batchWriteEach(userIds.map((userId) => deleteRequest(groupMemberKey(apiKeyId, organizationId, groupId, userId)))),
  );
  return {
    removed: userIds.filter((_, i) => report.written(i)),
    notRemoved: userIds.filter((_, i) => !report.written(i)),
    failure: report.failure,
  };
}

async function removeListedMembers(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
  userIds: readonly string[],
): Promise<Removal> {
  const members = await groupMembersAmong(apiKeyId, organizationId, groupId, userIds);
  return removeMembers(
    apiKeyId,
    organizationId,
    groupId,
    userIds.filter((userId) => members.has(userId)),
  );
}

/**
 * Pages through the group's members in user order, deleting each page before reading the next; stops at a page
 * that could not be deleted whole (a failure on a later page answers the earlier pages' users success).
 */
async function removeAllMembers(apiKeyId: string, organizationId: string, groupId: string): Promise<Removal> {
  const removed: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await queryGroupMembers(apiKeyId, organizationId, groupId, DELETE_ALL_PAGE, after);
    let outcome: Removal;
    try {
      outcome = await removeMembers(apiKeyId, organizationId, groupId, page.userIds);
    } catch (error) {
      if (removed.length === 0) throw error;
      outcome = { removed: [], notRemoved: page.userIds, failure: error };
    }
    removed.push(...outcome.removed);
    if (outcome.notRemoved.length > 0) return { removed, notRemoved: outcome.notRemoved, failure: outcome.failure };
    if (!page.more) return { removed, notRemoved: [] };
    after = page.sortKeys[page.sortKeys.length - 1];
  }
}
