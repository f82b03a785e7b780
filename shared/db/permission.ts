/**
 * Permission grants of a user on a resource (organization, folder or document), optionally expiring:
 *
 *   pk T#<key>#USER#<user>#PERMS   sk O#<org>#<type>#<id>    accessRole, expiresAt (s), ttl
 *      gsi1: T#<key>#USER#<user>#IN / <org>#P#<type>#<id>   (with the user's memberships, shared/db/membership.ts)
 *      gsi2: T#<key>#ORG#<org>#GRANTS#<type>#<id> / U#<user> who holds a grant on a resource
 *
 * DynamoDB's TTL purges expired grants some time after `expiresAt`; readers check expiry themselves, so an
 * expired grant stops counting at once (docs/decisions.md §4).
 */
import { batchGet, type Item, type ItemKey } from './batch';
import { queryAll, type QuerySpec } from './query';
import { TABLE_NAME } from './client';
import { key, prefix, segment, tenantKey } from './keys';
import { userEntryIndexKeys, userSortKey, type Role } from './membership';
import { organizationPartition } from './organization';
import type { TransactItem } from './transact';

export type ResourceType = 'organization' | 'folder' | 'document';

export interface Resource {
  type: ResourceType;
  /** The resource's id; for `organization`, the organization id. */
  id: string;
  organizationId: string;
}

export interface Grant extends Resource {
  userId: string;
  accessRole: Role;
  /** Unix seconds; no expiry when absent. */
  expiresAt?: number;
}

const TYPE_TAG: Record<ResourceType, string> = { organization: 'ORG', folder: 'FOLDER', document: 'DOC' };

const grantsPartition = (apiKeyId: string, userId: string) => tenantKey(apiKeyId, 'USER', segment(userId), 'PERMS');
const grantSortKey = (resource: Resource) =>
  key('O', segment(resource.organizationId), TYPE_TAG[resource.type], segment(resource.id));

export const grantKey = (apiKeyId: string, userId: string, resource: Resource): ItemKey => ({
  pk: grantsPartition(apiKeyId, userId),
  sk: grantSortKey(resource),
});

/** True while the grant counts: no expiry, or an expiry after `now` (ms). */
export function isActive(grant: { expiresAt?: number }, now: number): boolean {
  return grant.expiresAt === undefined || grant.expiresAt * 1000 > now;
}

export function toGrant(item: Item): Grant {
  return {
    userId: String(item.userId),
    type: item.type as ResourceType,
    id: String(item.id),
    organizationId: String(item.organizationId),
    accessRole: item.accessRole as Role,
    expiresAt: item.expiresAt as number | undefined,
  };
}

const holdersPartition = (apiKeyId: string, resource: Resource) =>
  key(
    organizationPartition(apiKeyId, resource.organizationId),
    'GRANTS',
    TYPE_TAG[resource.type],
    segment(resource.id),
  );

/** The full item of a grant, ready for a Put (replaces an earlier grant on the same resource). */
export function grantItem(apiKeyId: string, grant: Grant): Item {
  return {
    ...grantKey(apiKeyId, grant.userId, grant),
    ...grant,
    ttl: grant.expiresAt,
    ...userEntryIndexKeys(apiKeyId, grant.organizationId, grant.userId, 'P', TYPE_TAG[grant.type], segment(grant.id)),
    gsi2pk: holdersPartition(apiKeyId, grant),
    gsi2sk: userSortKey(grant.userId),
  };
}

/** The Put of a grant inside a transaction (replaces an earlier grant on the same resource; no condition). */
export function putGrantItem(apiKeyId: string, grant: Grant): TransactItem {
  return { Put: { TableName: TABLE_NAME, Item: grantItem(apiKeyId, grant) } };
}

/** The user's active grants, all or in one organization (a query over the user's grants partition). */
export async function listActiveGrants(
  apiKeyId: string,
  userId: string,
  organizationId: string | undefined,
  now: number,
): Promise<Grant[]> {
  const items = await queryAll({
    KeyConditionExpression: organizationId === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :org)',
    ExpressionAttributeValues: {
      ':pk': grantsPartition(apiKeyId, userId),
      ...(organizationId === undefined ? {} : { ':org': prefix('O', segment(organizationId)) }),
    },
    ConsistentRead: true,
  });
  return items.map(toGrant).filter((grant) => isActive(grant, now));
}

/** The stored grants among `resources` for the user (active or not), keyed by their item key. */
export async function getGrants(apiKeyId: string, userId: string, resources: readonly Resource[]): Promise<Grant[]> {
  return (await batchGet(resources.map((resource) => grantKey(apiKeyId, userId, resource)))).map(toGrant);
}

/** Every grant on one document, through the holders index (gsi2): what document migration moves. */
export function documentGrantsQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: {
      ':pk': holdersPartition(apiKeyId, { type: 'document', id: documentId, organizationId }),
    },
  };
}

/** A grant on a document as it is on another document id (same holder, role and expiry). */
export const grantMovedTo = (apiKeyId: string, item: Item, documentId: string): Item =>
  grantItem(apiKeyId, { ...toGrant(item), id: documentId });
