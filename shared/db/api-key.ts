/**
 * API keys, listed under their workspace. An API key id is the tenant of all customer data.
 *
 *   pk WS#<workspaceId>   sk KEY#<apiKeyId>    id, apiKeyName, type, tokenVersion (bumped by every token reset)
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet } from './batch';
import { TABLE_NAME, db } from './client';
import { key, prefix, segment } from './keys';
import { mapPage, readPage, type Page } from './query';
import { named, type TransactItem } from './transact';

/** Key types: `testing` keys are issued through the API, `production` ones by the operator (docs/decisions.md §2). */
export const API_KEY_TYPES = ['testing', 'production'] as const;

export type ApiKeyType = (typeof API_KEY_TYPES)[number];

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

/**
 * One page of the workspace's keys in creation order (ids are time-ordered), starting after the key `afterId`;
 * the page's `after` is the id of its last key when more follow. Reads a page and one item more.
 */
export async function listApiKeys(workspaceId: string, limit: number, afterId?: string): Promise<Page<ApiKey>> {
  const listing = { partition: key('WS', segment(workspaceId)), prefix: prefix('KEY'), consistent: true };
  const page = await readPage(listing, {
    size: limit,
    after: afterId === undefined ? undefined : apiKeyKey(workspaceId, afterId).sk,
  });
  return mapPage(page, fromItem, (apiKey) => apiKey.id);
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
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: apiKeyKey(apiKey.workspaceId, apiKey.id),
        UpdateExpression: 'SET tokenVersion = :next',
        ConditionExpression: 'tokenVersion = :current',
        ExpressionAttributeValues: { ':next': apiKey.tokenVersion + 1, ':current': apiKey.tokenVersion },
      },
    },
    () => new TokenVersionChanged(),
  );
}
