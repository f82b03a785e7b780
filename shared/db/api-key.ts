/**
 * API keys, listed under their workspace. An API key id is the tenant of all customer data.
 *
 *   pk WS#<workspaceId>   sk KEY#<apiKeyId>    id, apiKeyName, type, tokenVersion (bumped by every token reset)
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from './batch';
import { TABLE_NAME, db } from './client';
import { key, prefix, segment } from './keys';
import { named, type TransactItem } from './transact';

export type ApiKeyType = 'testing' | 'production';

export interface ApiKey {
  id: string;
  workspaceId: string;
  apiKeyName: string;
  type: ApiKeyType;
  createdAt: number;
  tokenVersion: number;
}

const apiKeyKey = (workspaceId: string, apiKeyId: string) => ({
  pk: key('WS', segment(workspaceId)),
  sk: key('KEY', segment(apiKeyId)),
});

function fromItem(item: Record<string, unknown>): ApiKey {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as ApiKey;
}

/** The key, when it belongs to `workspaceId`. */
export async function getApiKey(workspaceId: string, apiKeyId: string): Promise<ApiKey | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: apiKeyKey(workspaceId, apiKeyId), ConsistentRead: true }),
  );
  return Item ? fromItem(Item) : undefined;
}

export interface ApiKeyPage {
  apiKeys: ApiKey[];
  /** Id of the last key returned when more follow. */
  lastId?: string;
}

/**
 * One page of the workspace's keys in creation order (ids are time-ordered), starting after `afterId`.
 * Reads `limit + 1` items at most, to know whether another page follows.
 */
export async function listApiKeys(workspaceId: string, limit: number, afterId?: string): Promise<ApiKeyPage> {
  const pk = key('WS', segment(workspaceId));
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
      ExpressionAttributeValues: { ':pk': pk, ':key': prefix('KEY') },
      ExclusiveStartKey: afterId === undefined ? undefined : apiKeyKey(workspaceId, afterId),
      Limit: limit + 1,
      ConsistentRead: true,
    }),
  );
  const apiKeys = Items.slice(0, limit).map(fromItem);
  return Items.length > limit ? { apiKeys, lastId: apiKeys[apiKeys.length - 1]?.id } : { apiKeys };
}

/** The named keys of the workspace that exist (one BatchGet per 100 ids), in id order. */
export async function getApiKeys(workspaceId: string, apiKeyIds: readonly string[]): Promise<ApiKey[]> {
  const found = await batchGet(apiKeyIds.map((id) => apiKeyKey(workspaceId, id)));
  return found.map(fromItem).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Puts a new key; fails its condition when the id exists. */
export function putApiKeyItem(apiKey: ApiKey): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: { ...apiKeyKey(apiKey.workspaceId, apiKey.id), ...apiKey },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Bumps the key's token version; fails its condition when another reset got there first. */
/** Another reset changed the key's token version since it was read. */
export class TokenVersionChanged extends Error {}

export function bumpTokenVersionItem(apiKey: ApiKey): TransactItem {
  return named({
    Update: {
      TableName: TABLE_NAME,
      Key: apiKeyKey(apiKey.workspaceId, apiKey.id),
      UpdateExpression: 'SET tokenVersion = :next',
      ConditionExpression: 'tokenVersion = :current',
      ExpressionAttributeValues: { ':next': apiKey.tokenVersion + 1, ':current': apiKey.tokenVersion },
    },
  }, () => new TokenVersionChanged());
}
