/**
 * Authentication per route level (docs/decisions.md §2). A successful check is remembered for at most 30 s
 * (config.authCacheMs), which is why a reset token stops working within 30 s everywhere. Failures are never
 * remembered, so a new token works at once.
 */
import type { AuthLevel } from '../routes';
import { config } from '../core/config';
import { hashSecret, hashesEqual } from '../crypto/tokens';
import { findAuthToken } from '../db/auth-token';
import { getWorkspace } from '../db/workspace';
import { PermissionDeniedError, UnauthenticatedError } from '../core/errors';

export interface WorkspaceCaller {
  level: 'workspace';
  workspaceId: string;
}

export interface ApiKeyCaller {
  level: 'apiKey';
  /** The tenant: every key of customer data starts with it. */
  apiKeyId: string;
  workspaceId: string;
}

export type Caller = { level: 'none' } | WorkspaceCaller | ApiKeyCaller;

export type CallerFor<L extends AuthLevel> = L extends 'apiKey'
  ? ApiKeyCaller
  : L extends 'workspace'
    ? WorkspaceCaller
    : { level: 'none' };

export type Headers = Readonly<Record<string, string | undefined>>;

const INVALID_API_KEY = 'Invalid API key.';
const INVALID_WORKSPACE = 'Invalid workspace credentials.';
const MAX_ID_LENGTH = 256;
const MAX_TOKEN_LENGTH = 1024;
const MAX_CACHE_ENTRIES = 1000;

const cache = new Map<string, { caller: Caller; expiresAt: number }>();

function remembered(cacheKey: string, now: number): Caller | undefined {
  const entry = cache.get(cacheKey);
  if (!entry) return undefined;
  if (entry.expiresAt > now) return entry.caller;
  cache.delete(cacheKey);
  return undefined;
}

function remember(cacheKey: string, caller: Caller, now: number): void {
  if (config.authCacheMs === 0) return;
  if (cache.size >= MAX_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(cacheKey, { caller, expiresAt: now + config.authCacheMs });
}

/** Drops what this process remembers of a key's tokens (after a reset); other processes forget within 30 s. */
export function forgetApiKeyCredentials(apiKeyId: string): void {
  for (const [cacheKey, entry] of cache) {
    if (entry.caller.level === 'apiKey' && entry.caller.apiKeyId === apiKeyId) cache.delete(cacheKey);
  }
}

function usable(value: string | undefined, maxLength: number): value is string {
  return value !== undefined && value.length > 0 && value.length <= maxLength;
}

async function authenticateApiKey(headers: Headers, now: number): Promise<ApiKeyCaller> {
  const apiKeyId = headers['x-service-api-key'];
  const token = headers['x-service-auth-token'];
  if (!apiKeyId || !token) {
    throw new UnauthenticatedError('Missing credentials: send the x-service-api-key and x-service-auth-token headers.');
  }
  if (!usable(apiKeyId, MAX_ID_LENGTH) || !usable(token, MAX_TOKEN_LENGTH))
    throw new PermissionDeniedError(INVALID_API_KEY);
  const tokenHash = hashSecret(token);
  const cacheKey = `k\u0000${apiKeyId}\u0000${tokenHash}`;
  const cached = remembered(cacheKey, now);
  if (cached) return cached as ApiKeyCaller;
  const stored = await findAuthToken(apiKeyId, tokenHash);
  if (!stored || !hashesEqual(stored.tokenHash, tokenHash)) throw new PermissionDeniedError(INVALID_API_KEY);
  const caller: ApiKeyCaller = { level: 'apiKey', apiKeyId, workspaceId: stored.workspaceId };
  remember(cacheKey, caller, now);
  return caller;
}

async function authenticateWorkspace(headers: Headers, now: number): Promise<WorkspaceCaller> {
  const workspaceId = headers['x-service-workspace-id'];
  const token = headers['x-service-workspace-auth-token'] ?? headers['x-service-auth-token'];
  if (!workspaceId || !token) {
    throw new UnauthenticatedError(
      'Missing credentials: send the x-service-workspace-id and x-service-workspace-auth-token headers.',
    );
  }
  if (!usable(workspaceId, MAX_ID_LENGTH) || !usable(token, MAX_TOKEN_LENGTH))
    throw new PermissionDeniedError(INVALID_WORKSPACE);
  const tokenHash = hashSecret(token);
  const cacheKey = `w\u0000${workspaceId}\u0000${tokenHash}`;
  const cached = remembered(cacheKey, now);
  if (cached) return cached as WorkspaceCaller;
  const workspace = await getWorkspace(workspaceId);
  if (!workspace || !hashesEqual(workspace.authTokenHash, tokenHash))
    throw new PermissionDeniedError(INVALID_WORKSPACE);
  const caller: WorkspaceCaller = { level: 'workspace', workspaceId };
  remember(cacheKey, caller, now);
  return caller;
}

/**
 * Checks the credentials a route of `level` needs. Throws UnauthenticatedError when they are missing and
 * PermissionDeniedError when they are wrong. `headers` must have lower-case names.
 */
export async function authenticate(level: AuthLevel, headers: Headers, now = Date.now()): Promise<Caller> {
  switch (level) {
    case 'none':
      return { level: 'none' };
    case 'workspace':
      return authenticateWorkspace(headers, now);
    case 'apiKey':
      return authenticateApiKey(headers, now);
  }
}
