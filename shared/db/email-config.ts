/**
 * The email service configuration of a tenant (one item).
 *
 *   pk T#<apiKeyId>   sk CONFIG#EMAIL   config, version
 *
 * The provider API key is kept apart from the settings as its ciphertext plus the masked form: reads (the get
 * route has no KMS grant) show the masked form and never decrypt; the clear key is never stored.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { tenantKey } from './keys';

export type EmailServiceType = 'default' | 'sendgrid' | 'custom';

/** The settings shown as `emailServiceConfig`, except the provider key. */
export interface EmailSettings {
  type?: EmailServiceType;
  fromEmail?: string;
  fromCompany?: string;
  triggers?: Record<string, boolean>;
}

export interface ProviderKey {
  /** Encryption SDK message (base64), bound to the tenant by its encryption context. */
  ciphertext: string;
  /** What responses show: the key with all but its last four characters hidden. */
  masked: string;
}

export interface EmailConfigRecord {
  useEmailService?: boolean;
  emailServiceConfig: EmailSettings;
  providerKey?: ProviderKey;
}

export interface StoredEmailConfig {
  config: EmailConfigRecord;
  /** Optimistic-lock counter: 0 when nothing is stored. */
  version: number;
}

const configKey = (apiKeyId: string) => ({ pk: tenantKey(apiKeyId), sk: 'CONFIG#EMAIL' });

export async function getEmailConfig(apiKeyId: string): Promise<StoredEmailConfig | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: configKey(apiKeyId), ConsistentRead: true }));
  return Item ? { config: Item.config as EmailConfigRecord, version: Item.version as number } : undefined;
}

/**
 * Stores `config` if the stored version is still `expectedVersion` (0: nothing stored). Returns false when
 * another writer changed it in between, so the caller can merge again.
 */
export async function putEmailConfig(apiKeyId: string, config: EmailConfigRecord, expectedVersion: number): Promise<boolean> {
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
