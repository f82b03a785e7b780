/**
 * Auth tokens of an API key: looked up by the hash of the token, readable back through their ciphertext.
 *
 *   pk KEY#<apiKeyId>   sk TOKEN#<sha256(token)>   workspaceId, name, domains, encryptedToken, createdAt
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { key, prefix, segment } from './keys';
import type { TransactItem } from './transact';

export interface AuthToken {
  apiKeyId: string;
  workspaceId: string;
  tokenHash: string;
  /** Encryption SDK message of the token (base64); see shared/crypto/encryption.ts. */
  encryptedToken: string;
  name: string;
  domains: string[];
  createdAt: number;
}

const tokenKey = (apiKeyId: string, tokenHash: string) => ({
  pk: key('KEY', segment(apiKeyId)),
  sk: key('TOKEN', tokenHash),
});

function fromItem(item: Record<string, unknown>): AuthToken {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as AuthToken;
}

/** The token of `apiKeyId` whose hash is `tokenHash`, if there is one (one GetItem). */
export async function findAuthToken(apiKeyId: string, tokenHash: string): Promise<AuthToken | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: tokenKey(apiKeyId, tokenHash), ConsistentRead: true }),
  );
  return Item ? fromItem(Item) : undefined;
}

/** Every token of the key (a key holds a handful). */
export async function listAuthTokens(apiKeyId: string): Promise<AuthToken[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :token)',
      ExpressionAttributeValues: { ':pk': key('KEY', segment(apiKeyId)), ':token': prefix('TOKEN') },
      ConsistentRead: true,
    }),
  );
  return Items.map(fromItem).sort((a, b) => a.createdAt - b.createdAt);
}

export function putAuthTokenItem(token: AuthToken): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: { ...tokenKey(token.apiKeyId, token.tokenHash), ...token },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

export function deleteAuthTokenItem(token: AuthToken): TransactItem {
  return { Delete: { TableName: TABLE_NAME, Key: tokenKey(token.apiKeyId, token.tokenHash) } };
}
