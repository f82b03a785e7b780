/**
 * User group rules (decisions §4 and §10): groups live in an existing organization (created on request), adding
 * a group again renames it, members are added to and removed from a group that must exist.
 */
import { batchWrite, deleteRequest, putRequest } from '../db/batch';
import { organizationExists, ensureOrganizationItem } from '../db/organization';
import { transactWrite } from '../db/transact';
import {
  getGroup,
  groupItem,
  groupMemberItem,
  groupMemberKey,
  groupMembersAmong,
  queryGroupMembers,
  type UserGroup,
} from '../db/user-group';
import { batchResult, type BatchResult } from '../http/batch-result';
import { NotFoundError } from '../http/errors';

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
): Promise<BatchResult> {
  if (createOrganization) await transactWrite([ensureOrganizationItem(apiKeyId, organizationId, now)]);
  else if (!(await organizationExists(apiKeyId, organizationId))) throw new NotFoundError('Organization not found.');
  // Puts replace: a group sent again takes the new name, so a retried request ends in the same state.
  await batchWrite(groups.map((group) => putRequest(groupItem(apiKeyId, { ...group, organizationId }))));
  return batchResult(groups, (group) => group.groupId, (group) => ({ success: true, id: group.groupId, message: 'User group added.' }));
}

/** Throws NotFoundError when the organization has no such group (in this tenant). */
async function requireGroup(apiKeyId: string, organizationId: string, groupId: string): Promise<void> {
  if (!(await getGroup(apiKeyId, organizationId, groupId))) throw new NotFoundError('User group not found.');
}

/** Adds the users to the group (adding a member again changes nothing). Throws NotFoundError for an unknown group. */
export async function addGroupMembers(apiKeyId: string, organizationId: string, groupId: string, userIds: readonly string[]): Promise<BatchResult> {
  await requireGroup(apiKeyId, organizationId, groupId);
  await batchWrite(userIds.map((userId) => putRequest(groupMemberItem(apiKeyId, organizationId, groupId, userId))));
  return batchResult(userIds, (userId) => userId, () => ({ success: true, organizationUserGroupId: groupId, message: 'User added to group.' }));
}

/** Which members to remove: the listed users, or every member. */
export type MembersToRemove = { userIds: readonly string[] } | { all: true };

/**
 * Removes members from the group and reports each listed user (removed, or not a member) or, for `all`, each
 * user removed. Throws NotFoundError for an unknown group.
 */
export async function removeGroupMembers(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
  members: MembersToRemove,
): Promise<BatchResult> {
  await requireGroup(apiKeyId, organizationId, groupId);
  const removed = 'all' in members
    ? await removeAllMembers(apiKeyId, organizationId, groupId)
    : await removeListedMembers(apiKeyId, organizationId, groupId, members.userIds);
  const listed = 'all' in members ? removed : members.userIds;
  const present = new Set(removed);
  return batchResult(listed, (userId) => userId, (userId) =>
    present.has(userId)
      ? { success: true, organizationUserGroupId: groupId, message: 'User removed from group.' }
      : { success: false, organizationUserGroupId: groupId, message: 'User is not in the group.' },
  );
}

async function removeListedMembers(apiKeyId: string, organizationId: string, groupId: string, userIds: readonly string[]): Promise<string[]> {
  const members = await groupMembersAmong(apiKeyId, organizationId, groupId, userIds);
  const removed = userIds.filter((userId) => members.has(userId));
  await batchWrite(removed.map((userId) => deleteRequest(groupMemberKey(apiKeyId, organizationId, groupId, userId))));
  return removed;
}

/** Pages through the group's members in user order, deleting each page before reading the next. */
async function removeAllMembers(apiKeyId: string, organizationId: string, groupId: string): Promise<string[]> {
  const removed: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await queryGroupMembers(apiKeyId, organizationId, groupId, DELETE_ALL_PAGE, after);
    await batchWrite(page.userIds.map((userId) => deleteRequest(groupMemberKey(apiKeyId, organizationId, groupId, userId))));
    removed.push(...page.userIds);
    if (!page.more) return removed;
    after = page.sortKeys[page.sortKeys.length - 1];
  }
}
