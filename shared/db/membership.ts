/**
 * Memberships: a user at one level of an organization (the organization itself, a folder, or a document) with a
 * role. One partition per level, so a level's members read in user order at the cost of the page:
 *
 *   pk T#<key>#ORG#<org>#MEMBERS#ORG           sk U#<user>   organization members
 *   pk T#<key>#ORG#<org>#MEMBERS#FOLDER#<f>    sk U#<user>   folder members
 *   pk T#<key>#ORG#<org>#MEMBERS#DOC#<d>       sk U#<user>   document members
 *      gsi1: T#<key>#ORG#<org>#USER#<user> / M#<level>     everything of a user in the organization
 *      gsi2 (documents only): T#<key>#ORG#<org>#DOCMEMBERS / <d>#U#<user>   all document members
 *
 * The gsi1 partition is shared with the user's permissions (P#...) and group memberships (G#...) in the
 * organization, so removing a user from an organization is one query.
 */
import { batchGet, type Item, type ItemKey } from './batch';
import { mapPage, queryAll, readPage, type Page, type QuerySpec } from './query';
import { TABLE_NAME } from './client';
import { key, segment } from './keys';
import { organizationPartition } from './organization';
import { NotFoundError } from '../core/errors';
import { named, type TransactItem } from './transact';

export type Role = 'viewer' | 'editor';
export const ROLES = ['viewer', 'editor'] as const;

export type Level = { type: 'organization' } | { type: 'folder'; id: string } | { type: 'document'; id: string };

export interface Membership {
  organizationId: string;
  userId: string;
  levelType: Level['type'];
  /** Folder or document id; absent at organization level. */
  levelId?: string;
  accessRole: Role;
  /** Present on document memberships: the document's id (for grouping all document members). */
  documentId?: string;
}

function levelTag(level: Level): string {
  if (level.type === 'organization') return 'ORG';
  return key(level.type === 'folder' ? 'FOLDER' : 'DOC', segment(level.id));
}

const levelPartition = (apiKeyId: string, organizationId: string, level: Level) =>
  key(organizationPartition(apiKeyId, organizationId), 'MEMBERS', levelTag(level));

/** gsi1 partition: every membership, permission and group membership of one user in one organization. */
export const userInOrganizationPartition = (apiKeyId: string, organizationId: string, userId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'USER', segment(userId));

const documentMembersPartition = (apiKeyId: string, organizationId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'DOCMEMBERS');

/** Sort key of a user inside a level partition (also the page cursor of level queries). */
export const userSortKey = (userId: string) => key('U', segment(userId));

export const membershipKey = (apiKeyId: string, organizationId: string, level: Level, userId: string): ItemKey => ({
  pk: levelPartition(apiKeyId, organizationId, level),
  sk: userSortKey(userId),
});

export function toMembership(item: Item): Membership {
  return {
    organizationId: String(item.organizationId),
    userId: String(item.userId),
    levelType: item.levelType as Level['type'],
    levelId: item.levelId as string | undefined,
    accessRole: item.accessRole as Role,
    documentId: item.levelType === 'document' ? (item.levelId as string) : undefined,
  };
}

/**
 * Adds the user at the level or, when already there, sets the role when given (`accessRole` defaults to
 * `editor` for a new membership, docs/decisions.md §4). Never fails.
 */
export function upsertMembershipItem(
  apiKeyId: string,
  organizationId: string,
  level: Level,
  userId: string,
  accessRole: Role | undefined,
  now: number,
): TransactItem {
  const values: Record<string, unknown> = {
    ':org': organizationId,
    ':user': userId,
    ':type': level.type,
    ':now': now,
    ':gsi1pk': userInOrganizationPartition(apiKeyId, organizationId, userId),
    ':gsi1sk': key('M', levelTag(level)),
    ':role': accessRole ?? 'editor',
  };
  const sets = [
    'organizationId = :org',
    'userId = :user',
    'levelType = :type',
    'createdAt = if_not_exists(createdAt, :now)',
    'gsi1pk = :gsi1pk',
    'gsi1sk = :gsi1sk',
    accessRole === undefined ? 'accessRole = if_not_exists(accessRole, :role)' : 'accessRole = :role',
  ];
  if (level.type !== 'organization') {
    values[':levelId'] = level.id;
    sets.push('levelId = :levelId');
  }
  if (level.type === 'document') {
    values[':gsi2pk'] = documentMembersPartition(apiKeyId, organizationId);
    values[':gsi2sk'] = key(segment(level.id), userSortKey(userId));
    sets.push('gsi2pk = :gsi2pk', 'gsi2sk = :gsi2sk');
  }
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: membershipKey(apiKeyId, organizationId, level, userId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeValues: values,
    },
  };
}

/** Sets the role of an existing membership; fails its condition when the user is not at that level. */
export function setRoleItem(apiKeyId: string, organizationId: string, level: Level, userId: string, accessRole: Role): TransactItem {
  return named({
    Update: {
      TableName: TABLE_NAME,
      Key: membershipKey(apiKeyId, organizationId, level, userId),
      UpdateExpression: 'SET accessRole = :role',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':role': accessRole },
    },
  }, () => new NotFoundError('User does not exist.'));
}

/**
 * Memberships of `userIds` at the level that exist, keyed by user id. Strongly consistent unless
 * `consistent: false` (listings, which may trail a write by a moment, at half the read cost).
 */
export async function getMemberships(
  apiKeyId: string,
  organizationId: string,
  level: Level,
  userIds: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, Membership>> {
  const items = await batchGet(
    userIds.map((userId) => membershipKey(apiKeyId, organizationId, level, userId)),
    { consistent: options.consistent ?? true },
  );
  return new Map(items.map(toMembership).map((membership) => [membership.userId, membership]));
}

/**
 * One page of a level's members in user order, after the sort key `after` (the page's `after` is the sort key of
 * its last member when more follow); eventually consistent (listings only: half the read cost).
 */
export async function queryLevelMembers(
  apiKeyId: string,
  organizationId: string,
  level: Level,
  limit: number,
  after?: string,
): Promise<Page<Membership>> {
  return mapPage(await readPage({ partition: levelPartition(apiKeyId, organizationId, level) }, { size: limit, after }), toMembership);
}

/**
 * One page of all document members of the organization, ordered by document then user (gsi2), after the gsi2
 * sort key `after` (see documentMemberSortKey).
 */
export async function queryDocumentMembers(
  apiKeyId: string,
  organizationId: string,
  limit: number,
  after?: string,
): Promise<Page<Membership>> {
  const listing = { index: 'gsi2', partition: documentMembersPartition(apiKeyId, organizationId) };
  return mapPage(await readPage(listing, { size: limit, after }), toMembership);
}

/** The gsi2 sort key of a document membership (the cursor of queryDocumentMembers). */
export const documentMemberSortKey = (documentId: string, userId: string) => key(segment(documentId), userSortKey(userId));

/** The key of one entry of a user in an organization, with the document it concerns (document memberships and grants). */
export type UserEntry = ItemKey & { documentId?: string };

/**
 * Keys of everything a user has in the organization: memberships at every level, permissions, group
 * memberships (one gsi1 query, paged to the end).
 */
export async function userEntriesInOrganization(apiKeyId: string, organizationId: string, userId: string): Promise<UserEntry[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': userInOrganizationPartition(apiKeyId, organizationId, userId) },
    // Membership (levelType, levelId) and grant (type, id) attributes name the document an entry concerns.
    ProjectionExpression: 'pk, sk, levelType, levelId, #type, id',
    ExpressionAttributeNames: { '#type': 'type' },
  });
  return items.map((item) => {
    const documentId = item.levelType === 'document' ? item.levelId : item.type === 'document' ? item.id : undefined;
    return { pk: String(item.pk), sk: String(item.sk), ...(documentId === undefined ? {} : { documentId: String(documentId) }) };
  });
}

/** Every document membership of one user in the organization (gsi1, `M#DOC#...`). */
export async function documentMembershipsOfUser(apiKeyId: string, organizationId: string, userId: string): Promise<Membership[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :docs)',
    ExpressionAttributeValues: {
      ':pk': userInOrganizationPartition(apiKeyId, organizationId, userId),
      ':docs': key('M', 'DOC', ''),
    },
  });
  return items.map(toMembership);
}

/** The memberships of one document (its level partition): what document migration moves. */
export function documentMembershipsQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': levelPartition(apiKeyId, organizationId, { type: 'document', id: documentId }) },
    ConsistentRead: true,
  };
}

/** A document membership's item as it is under another document id (same user, role and creation time). */
export function membershipMovedTo(apiKeyId: string, item: Item, documentId: string): Item {
  const { organizationId, userId } = toMembership(item);
  const level: Level = { type: 'document', id: documentId };
  return {
    ...item,
    ...membershipKey(apiKeyId, organizationId, level, userId),
    levelId: documentId,
    gsi1sk: key('M', levelTag(level)),
    gsi2sk: documentMemberSortKey(documentId, userId),
  };
}
