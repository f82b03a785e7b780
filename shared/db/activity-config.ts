/**
 * The activity service configuration of a tenant (one item).
 *
 *   pk T#<apiKeyId>   sk CONFIG#ACTIVITY   config, version
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { tenantKey } from './keys';

export interface ActivityServiceConfig {
  isEnabled?: boolean;
  enabledTime?: number;
  immutable?: boolean;
  triggers?: { comment?: Record<string, boolean> };
}

export interface StoredActivityConfig {
  config: ActivityServiceConfig;
  /** Optimistic-lock counter: 0 when nothing is stored. */
  version: number;
}

const configKey = (apiKeyId: string) => ({ pk: tenantKey(apiKeyId), sk: 'CONFIG#ACTIVITY' });

export async function getActivityConfig(apiKeyId: string): Promise<StoredActivityConfig | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: configKey(apiKeyId), ConsistentRead: true }));
  return Item ? { config: Item.config as ActivityServiceConfig, version: Item.version as number } : undefined;
}

/**
 * Stores `config` if the stored version is still `expectedVersion` (0: nothing stored). Returns false when
 * another writer changed it in between, so the caller can merge again.
 */
export async function putActivityConfig(apiKeyId: string, config: ActivityServiceConfig, expectedVersion: number): Promise<boolean> {
  try {
    await db.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: { ...configKey(apiKeyId), config, version: expectedVersion + 1 },
        ConditionExpression: expectedVersion === 0 ? 'attribute_not_exists(pk)' : 'version = :expected',
        ExpressionAttributeValues: expectedVersion === 0 ? undefined : { ':expected': expectedVersion },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
