/**
 * One item per tenant holding a configuration object and an optimistic-lock version, for read-merge-write
 * updates that never lose a concurrent change (the activity and email configurations).
 *
 *   pk T#<apiKeyId>   sk CONFIG#<NAME>   config, version
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { tenantKey } from './keys';

export interface Versioned<T> {
  config: T;
  /** Optimistic-lock counter: 0 when nothing is stored. */
  version: number;
}

export function versionedConfig<T>(name: string) {
  const configKey = (apiKeyId: string) => ({ pk: tenantKey(apiKeyId), sk: `CONFIG#${name}` });
  return {
    async get(apiKeyId: string): Promise<Versioned<T> | undefined> {
      const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: configKey(apiKeyId), ConsistentRead: true }));
      return Item ? { config: Item.config as T, version: Item.version as number } : undefined;
    },
    /**
     * Stores `config` if the stored version is still `expectedVersion` (0: nothing stored). Returns false when
     * another writer changed it in between, so the caller can merge again.
     */
    async put(apiKeyId: string, config: T, expectedVersion: number): Promise<boolean> {
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
    },
  };
}
