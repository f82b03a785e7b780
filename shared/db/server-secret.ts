/**
 * Server secrets that only the service itself uses (the page-token signing key), kept in the table:
 *
 *   pk SYSTEM   sk SECRET#<name>   value (32 random bytes, base64)
 *
 * Created on first use with a conditional put, so concurrent first users agree on one value. Only the service's
 * functions can read the table, and they can already read every item a page token points into; tenants never
 * see the item. Deleting it rotates the secret (outstanding page tokens stop working, as they would after 24 h).
 */
import { randomBytes } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { key, segment } from './keys';

const secretKey = (name: string) => ({ pk: 'SYSTEM', sk: key('SECRET', segment(name)) });

async function readSecret(name: string): Promise<Buffer | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: secretKey(name), ConsistentRead: true }));
  return typeof Item?.value === 'string' ? Buffer.from(Item.value, 'base64') : undefined;
}

/** The secret called `name`, created when it does not exist yet. */
export async function getOrCreateServerSecret(name: string): Promise<Buffer> {
  const existing = await readSecret(name);
  if (existing) return existing;
  const value = randomBytes(32);
  try {
    await db.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: { ...secretKey(name), value: value.toString('base64'), createdAt: Date.now() },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return value;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const winner = await readSecret(name);
    if (!winner) throw error;
    return winner;
  }
}
