/**
 * User groups of an organization and their members:
 *
 *   pk T#<key>#ORG#<org>               sk GROUP#<g>    groupId, groupName
 *   pk T#<key>#ORG#<org>#GROUP#<g>     sk U#<user>     a member
 *      gsi1: T#<key>#USER#<user>#IN / <org>#G#<g>     (with the user's memberships, shared/db/membership.ts)
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, type Item, type ItemKey } from './batch';
import { TABLE_NAME, db } from './client';
import { key, segment } from './keys';
import { userEntryIndexKeys, userSortKey } from './membership';
import { organizationPartition } from './organization';
import { readPage } from './query';

export interface UserGroup {
  organizationId: string;
  groupId: string;
  groupName: string;
}

export const groupKey = (apiKeyId: string, organizationId: string, groupId: string): ItemKey => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: key('GROUP', segment(groupId)),
});

const membersPartition = (apiKeyId: string, organizationId: string, groupId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'GROUP', segment(groupId));

export const groupMemberKey = (apiKeyId: string, organizationId: string, groupId: string, userId: string): ItemKey => ({
  pk: membersPartition(apiKeyId, organizationId, groupId),
  sk: userSortKey(userId),
});

export function groupItem(apiKeyId: string, group: UserGroup): Item {
  return { ...groupKey(apiKeyId, group.organizationId, group.groupId), ...group };
}

export function groupMemberItem(apiKeyId: string, organizationId: string, groupId: string, userId: string): Item {
  return {
    ...groupMemberKey(apiKeyId, organizationId, groupId, userId),
    organizationId,
    groupId,
    userId,
    ...userEntryIndexKeys(apiKeyId, organizationId, userId, 'G', segment(groupId)),
  };
}

export async function getGroup(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
): Promise<UserGroup | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: groupKey(apiKeyId, organizationId, groupId), ConsistentRead: true }),
  );
  return Item ? { organizationId, groupId: String(Item.groupId), groupName: String(Item.groupName) } : undefined;
}

/** Which of `userIds` are members of the group. */
export async function groupMembersAmong(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
  userIds: readonly string[],
): Promise<Set<string>> {
  const items = await batchGet(userIds.map((userId) => groupMemberKey(apiKeyId, organizationId, groupId, userId)));
  return new Set(items.map((item) => String(item.userId)));
}

/**
 * One page of a group's members in user order after the sort key `after` (strongly consistent): their ids, their
 * sort keys (the cursors), and whether more follow.
 */
export async function queryGroupMembers(
  apiKeyId: string,
  organizationId: string,
  groupId: string,
  limit: number,
  after?: string,
): Promise<{ userIds: string[]; sortKeys: string[]; more: boolean }> {
  const listing = { partition: membersPartition(apiKeyId, organizationId, groupId), consistent: true };
  const page = await readPage(listing, { size: limit, after });
  return {
    userIds: page.items.map((item) => String(item.userId)),
    sortKeys: page.items.map((item) => String(item.sk)),
    more: page.after !== undefined,
  };
}
