/**
 * Memberships: a user at one level of an organization (the organization itself, a folder, or a document) with a
 * role. One partition per level, so a level's members read in user order at the cost of the page:
 *
 *   pk T#<key>#ORG#<org>#MEMBERS#ORG           sk U#<user>   organization members
 *   pk T#<key>#ORG#<org>#MEMBERS#FOLDER#<f>    sk U#<user>   folder members
 *   pk T#<key>#ORG#<org>#MEMBERS#DOC#<d>       sk U#<user>   document members
 *      userId, organizationId, levelType, levelId, accessRole, and a copy of the profile: name, email, initial,
 *      profileVersion (the version of the profile the copy was made from: a copy never replaces a newer one)
 *      gsi1: T#<key>#USER#<user>#IN / <org>#M#<level>     everything of a user in the tenant, by organization
 *      gsi2 (documents only): T#<key>#ORG#<org>#DOCMEMBERS / <d>#U#<user>   all document members
 *
 * The gsi1 partition is shared with the user's permissions (<org>#P#...) and group memberships (<org>#G#...), so
 * removing a user from an organization is one query (the organization's prefix), and a profile change finds every
 * membership to copy it to with one query (the whole partition).
 *
 * The profile copy (shared/domain/profile-copies.ts) lets a listing of members answer from the membership items
 * alone: a page of 1,000 users is one Query of ~0.3 KB items instead of that plus 1,000 profile reads.
 */
import { batchGet, type Item, type ItemKey } from './batch';
import { mapPage, queryAll, queryPage, readPage, type Page, type QuerySpec } from './query';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, prefix, segment, tenantKey } from './keys';
import { organizationPartition } from './organization';
import { NotFoundError } from '../core/errors';
import { named, type TransactItem } from './transact';

export type Role = 'viewer' | 'editor';
export const ROLES = ['viewer', 'editor'] as const;

export type Level = { type: 'organization' } | { type: 'folder'; id: string } | { type: 'document'; id: string };

/** The profile fields a membership carries a copy of (shared/db/profile.ts owns them). */
export interface ProfileCopy {
  name?: string;
  email?: string;
  initial?: string;
}

export const PROFILE_COPY_FIELDS = ['name', 'email', 'initial'] as const;

/** A profile copy and the version of the profile it was made from (shared/db/profile.ts; 0: before versions). */
export interface VersionedCopy extends ProfileCopy {
  profileVersion: number;
}

export interface Membership extends ProfileCopy {
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

/** gsi1 partition: every membership, permission and group membership of one user in the tenant. */
const userEntriesPartition = (apiKeyId: string, userId: string) => tenantKey(apiKeyId, 'USER', segment(userId), 'IN');

/**
 * The gsi1 keys of one entry of a user in an organization: a membership (`M`, the level), a grant (`P`, ...) or a
 * group membership (`G`, the group). The organization leads the sort key, so its entries share a prefix.
 */
export const userEntryIndexKeys = (apiKeyId: string, organizationId: string, userId: string, ...entry: string[]) => ({
  gsi1pk: userEntriesPartition(apiKeyId, userId),
  gsi1sk: key(segment(organizationId), ...entry),
});

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
    ...copyOf(item),
  };
}

/** The profile copy an item carries (only the fields it has). */
export function copyOf(item: Item | ProfileCopy): ProfileCopy {
  const copy: ProfileCopy = {};
  for (const field of PROFILE_COPY_FIELDS) {
    const value = (item as Record<string, unknown>)[field];
    if (typeof value === 'string') copy[field] = value;
  }
  return copy;
}

/** Whether two copies hold the same fields with the same values. */
export const sameCopy = (a: ProfileCopy, b: ProfileCopy) => PROFILE_COPY_FIELDS.every((field) => a[field] === b[field]);

/** The versioned copy an item carries (a copy made before versions: version 0). */
export const versionedCopyOf = (item: Item | VersionedCopy): VersionedCopy => ({
  ...copyOf(item),
  profileVersion: typeof item.profileVersion === 'number' ? item.profileVersion : 0,
});

/**
 * Whether `copy` should replace the copy a membership holds: it was made from a newer profile, or from the same
 * version but differs (only profiles written before versions can, all at version 0). Never when `held` is newer.
 */
export const replacesCopy = (held: VersionedCopy, copy: VersionedCopy) =>
  held.profileVersion < copy.profileVersion || (held.profileVersion === copy.profileVersion && !sameCopy(held, copy));

/** The SET and REMOVE clauses that make an item's copy `copy` exactly (a field the profile lacks is removed), version included. */
function copyClauses(
  copy: VersionedCopy,
  names: Record<string, string>,
  values: Record<string, unknown>,
): { sets: string[]; removes: string[] } {
  const sets: string[] = ['#profileVersion = :profileVersion'];
  const removes: string[] = [];
  names['#profileVersion'] = 'profileVersion';
  values[':profileVersion'] = copy.profileVersion;
  for (const field of PROFILE_COPY_FIELDS) {
    names[`#${field}`] = field;
    const value = copy[field];
    if (value === undefined) {
      removes.push(`#${field}`);
    } else {
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
  }
  return { sets, removes };
}

const updateExpression = (sets: readonly string[], removes: readonly string[]) =>
  [sets.length > 0 ? `SET ${sets.join(', ')}` : '', removes.length > 0 ? `REMOVE ${removes.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');

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
  copy: VersionedCopy,
  now: number,
): TransactItem {
  const { gsi1pk, gsi1sk } = userEntryIndexKeys(apiKeyId, organizationId, userId, 'M', levelTag(level));
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {
    ':org': organizationId,
    ':user': userId,
    ':type': level.type,
    ':now': now,
    ':gsi1pk': gsi1pk,
    ':gsi1sk': gsi1sk,
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
  const copied = copyClauses(copy, names, values);
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: membershipKey(apiKeyId, organizationId, level, userId),
      UpdateExpression: updateExpression([...sets, ...copied.sets], copied.removes),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Sets the profile copy and, when given, the role of an existing membership; fails its condition when the user is
 * not at that level.
 */
export function updateMemberItem(
  apiKeyId: string,
  organizationId: string,
  level: Level,
  userId: string,
  copy: VersionedCopy,
  accessRole?: Role,
): TransactItem {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const { sets, removes } = copyClauses(copy, names, values);
  if (accessRole !== undefined) {
    values[':role'] = accessRole;
    sets.push('accessRole = :role');
  }
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: membershipKey(apiKeyId, organizationId, level, userId),
        UpdateExpression: updateExpression(sets, removes),
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    () => new NotFoundError('User does not exist.'),
  );
}

/**
 * Makes an existing membership's profile copy `copy`, unless the copy it holds was made from a newer profile (stream
 * records come again and out of order, and a slow writer may have read the profile before another write changed
 * it): the condition keeps the newer copy, as it keeps a membership removed meanwhile removed. Outside any
 * transaction: copies follow the write that changed the profile.
 */
export async function writeProfileCopy(membership: ItemKey, copy: VersionedCopy): Promise<void> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const { sets, removes } = copyClauses(copy, names, values);
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: { pk: membership.pk, sk: membership.sk },
        UpdateExpression: updateExpression(sets, removes),
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(#profileVersion) OR #profileVersion <= :profileVersion)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    ),
  );
}

/**
 * Memberships of `userIds` at the level that exist, keyed by user id. Strongly consistent unless
 * `consistent: false` (a read that may trail a write by a moment, at half the read cost).
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
 * its last member when more follow). Eventually consistent unless `consistent` (Get Users, which reads back a
 * write just answered: shared/domain/profile-copies.ts), at twice the read cost.
 */
export async function queryLevelMembers(
  apiKeyId: string,
  organizationId: string,
  level: Level,
  limit: number,
  after?: string,
  options: { consistent?: boolean } = {},
): Promise<Page<Membership>> {
  const listing = {
    partition: levelPartition(apiKeyId, organizationId, level),
    consistent: options.consistent ?? false,
  };
  return mapPage(await readPage(listing, { size: limit, after }), toMembership);
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
export const documentMemberSortKey = (documentId: string, userId: string) =>
  key(segment(documentId), userSortKey(userId));

/** The key of one entry of a user in an organization, with the document it concerns (document memberships and grants). */
export type UserEntry = ItemKey & { documentId?: string };

/**
 * Keys of everything a user has in the organization: memberships at every level, permissions, group
 * memberships (one gsi1 query, paged to the end).
 */
export async function userEntriesInOrganization(
  apiKeyId: string,
  organizationId: string,
  userId: string,
): Promise<UserEntry[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :org)',
    ExpressionAttributeValues: {
      ':pk': userEntriesPartition(apiKeyId, userId),
      ':org': prefix(segment(organizationId)),
    },
    // Membership (levelType, levelId) and grant (type, id) attributes name the document an entry concerns.
    ProjectionExpression: 'pk, sk, levelType, levelId, #type, id',
    ExpressionAttributeNames: { '#type': 'type' },
  });
  return items.map((item) => {
    const documentId = item.levelType === 'document' ? item.levelId : item.type === 'document' ? item.id : undefined;
    return {
      pk: String(item.pk),
      sk: String(item.sk),
      ...(documentId === undefined ? {} : { documentId: String(documentId) }),
    };
  });
}

/** Every document membership of one user in the organization (gsi1, `M#DOC#...`). */
export async function documentMembershipsOfUser(
  apiKeyId: string,
  organizationId: string,
  userId: string,
): Promise<Membership[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :docs)',
    ExpressionAttributeValues: {
      ':pk': userEntriesPartition(apiKeyId, userId),
      ':docs': prefix(segment(organizationId), 'M', 'DOC'),
    },
  });
  return items.map(toMembership);
}

/** The memberships of one document (its level partition): what document migration moves. */
export function documentMembershipsQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: {
      ':pk': levelPartition(apiKeyId, organizationId, { type: 'document', id: documentId }),
    },
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
    gsi1sk: userEntryIndexKeys(apiKeyId, organizationId, userId, 'M', levelTag(level)).gsi1sk,
    gsi2sk: documentMemberSortKey(documentId, userId),
  };
}

/** A membership's key with its versioned profile copy: what keeping copies in step needs. */
export type MembershipCopy = ItemKey & VersionedCopy;

/**
 * The memberships of a user in every organization of the tenant, with their profile copies (gsi1, the whole
 * partition, grants and group memberships filtered out), at most `limit` entries examined per call after `cursor`.
 */
export async function membershipCopiesOfUser(
  apiKeyId: string,
  userId: string,
  limit: number,
  cursor?: Record<string, unknown>,
): Promise<{ memberships: MembershipCopy[]; cursor?: Record<string, unknown> }> {
  const page = await queryPage(
    {
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      FilterExpression: 'attribute_exists(levelType)',
      ExpressionAttributeValues: { ':pk': userEntriesPartition(apiKeyId, userId) },
      ProjectionExpression: 'pk, sk, #name, email, initial, profileVersion',
      ExpressionAttributeNames: { '#name': 'name' },
    },
    limit,
    cursor,
  );
  return {
    memberships: page.items.map((item) => ({ pk: String(item.pk), sk: String(item.sk), ...versionedCopyOf(item) })),
    ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
  };
}
