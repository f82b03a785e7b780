/**
 * API keys and their auth tokens: issuing a key (with its first token), reading tokens back, resetting them.
 * Tokens are random 256-bit secrets, stored hashed (for look-up) and encrypted (so their owner can read them).
 */
import { encryptSecret, decryptSecret } from '../crypto/encryption';
import { hashSecret, newId, newSecretToken } from '../crypto/tokens';
import {
  TokenVersionChanged,
  bumpTokenVersionItem,
  getApiKey,
  putApiKeyItem,
  type ApiKey,
  type ApiKeyType,
} from '../db/api-key';
import { deleteAuthTokenItem, listAuthTokens, putAuthTokenItem, type AuthToken } from '../db/auth-token';
import { transactWrite, type TransactItem } from '../db/transact';
import { requireWorkspaceItem, setPaidPlanItem } from '../db/workspace';
import { AbortedError, NotFoundError } from '../core/errors';

export const DEFAULT_TOKEN_NAME = 'Default Auth Token';

export interface ReadableToken {
  token: string;
  name: string;
  domains: string[];
}

const tokenContext = (apiKeyId: string) => ({ purpose: 'api-key-auth-token', apiKeyId });

/** A new token for `apiKeyId`: the clear value (returned once to the caller) and the record to store. */
export async function newAuthToken(
  apiKeyId: string,
  workspaceId: string,
  name = DEFAULT_TOKEN_NAME,
  domains: string[] = [],
): Promise<{ token: string; record: AuthToken }> {
  const token = newSecretToken();
  const record: AuthToken = {
    apiKeyId,
    workspaceId,
    tokenHash: hashSecret(token),
    encryptedToken: await encryptSecret(token, tokenContext(apiKeyId)),
    name,
    domains,
    createdAt: Date.now(),
  };
  return { token, record };
}

export function newApiKey(workspaceId: string, apiKeyName: string, type: ApiKeyType): ApiKey {
  return { id: newId('key_'), workspaceId, apiKeyName, type, createdAt: Date.now(), tokenVersion: 0 };
}

/**
 * Creates a key in an existing workspace, with a first token unless `createAuthToken` is false. A production key
 * puts the workspace on the paid plan in the same transaction. Throws NotFoundError for an unknown workspace.
 */
export async function issueApiKey(options: {
  workspaceId: string;
  apiKeyName: string;
  type: ApiKeyType;
  createAuthToken: boolean;
}): Promise<{ apiKey: ApiKey; token?: string }> {
  const apiKey = newApiKey(options.workspaceId, options.apiKeyName, options.type);
  // A production key puts the workspace on the paid plan (docs/decisions.md §2); either way the workspace must exist.
  const workspaceItem =
    options.type === 'production' ? setPaidPlanItem(options.workspaceId) : requireWorkspaceItem(options.workspaceId);
  const items: TransactItem[] = [workspaceItem, putApiKeyItem(apiKey)];
  let token: string | undefined;
  if (options.createAuthToken) {
    const created = await newAuthToken(apiKey.id, options.workspaceId);
    token = created.token;
    items.push(putAuthTokenItem(created.record));
  }
  await transactWrite(items);
  return { apiKey, token };
}

async function requireKey(workspaceId: string, apiKeyId: string): Promise<ApiKey> {
  const apiKey = await getApiKey(workspaceId, apiKeyId);
  if (!apiKey) throw new NotFoundError('API key not found.');
  return apiKey;
}

/** The key's tokens in clear. Throws NotFoundError when the key is unknown or belongs to another workspace. */
export async function readAuthTokens(workspaceId: string, apiKeyId: string): Promise<ReadableToken[]> {
  await requireKey(workspaceId, apiKeyId);
  const tokens = await listAuthTokens(apiKeyId);
  return Promise.all(
    tokens.map(async (stored) => ({
      token: await decryptSecret(stored.encryptedToken, tokenContext(apiKeyId)),
      name: stored.name,
      domains: stored.domains,
    })),
  );
}

const RESET_ATTEMPTS = 3;

/**
 * Replaces every token of the key with one new token (named like the oldest one it replaces). Concurrent resets
 * are serialised by the key's token version, so exactly one token remains. Throws NotFoundError as readAuthTokens.
 */
export async function resetAuthTokens(workspaceId: string, apiKeyId: string): Promise<ReadableToken> {
  for (let attempt = 1; attempt <= RESET_ATTEMPTS; attempt += 1) {
    const apiKey = await requireKey(workspaceId, apiKeyId);
    const old = await listAuthTokens(apiKeyId);
    const name = old[0]?.name ?? DEFAULT_TOKEN_NAME;
    const domains = old[0]?.domains ?? [];
    const created = await newAuthToken(apiKeyId, workspaceId, name, domains);
    try {
      await transactWrite([
        bumpTokenVersionItem(apiKey),
        ...old.map(deleteAuthTokenItem),
        putAuthTokenItem(created.record),
      ]);
      return { token: created.token, name, domains };
    } catch (error) {
      if (!(error instanceof TokenVersionChanged)) throw error;
    }
  }
  throw new AbortedError('The auth tokens of this API key were reset concurrently; retry.');
}
