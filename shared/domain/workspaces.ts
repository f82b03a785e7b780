/**
 * Create Workspace (docs/decisions.md §3): the first workspace of an email is its root; further ones need the root on a
 * paid plan; names are unique per email; at most 5 per email. Every rule is a condition inside one transaction
 * with the writes, so concurrent requests cannot break them.
 */
import { createHash } from 'node:crypto';
import { hashSecret, newId, newSecretToken } from '../crypto/tokens';
import { config } from '../core/config';
import { putApiKeyItem, type ApiKey } from '../db/api-key';
import { consumeRateLimit } from '../db/rate-limit';
import { putAuthTokenItem } from '../db/auth-token';
import { named, transactWrite, type TransactItem } from '../db/transact';
import {
  claimWorkspaceNameItem,
  countAnotherWorkspaceItem,
  createEmailRegistryItem,
  getEmailRegistry,
  MAX_WORKSPACES_PER_EMAIL,
  putWorkspaceItem,
  requirePaidPlanItem,
  type WorkspaceRecord,
} from '../db/workspace';
import { AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError } from '../core/errors';
import { newApiKey, newAuthToken } from './credentials';
import { defaultApiKeyName, normalizeEmail } from './owner-email';

export interface CreateWorkspaceInput {
  ownerEmail: string;
  name?: string;
  workspaceName?: string;
  avatar?: string;
}

export interface CreatedWorkspace {
  workspace: WorkspaceRecord;
  /** The workspace auth token in clear: returned once, only its hash is stored. */
  authToken: string;
  apiKey: ApiKey;
}

/**
 * Creates the workspace with its first testing key and that key's first token. Throws AlreadyExistsError (name
 * taken by this email), PermissionDeniedError (root not paid), ResourceExhaustedError (5 workspaces
 * already; no Retry-After, as no wait lifts it).
 */
export async function createWorkspace(input: CreateWorkspaceInput): Promise<CreatedWorkspace> {
  const email = normalizeEmail(input.ownerEmail);
  const name = input.name ?? email;
  const workspaceName = input.workspaceName ?? `${name} workspace`;
  const authToken = newSecretToken();
  const workspace: WorkspaceRecord = {
    id: newId('ws_'),
    workspaceName,
    ownerEmail: email,
    ownerId: ownerIdOf(email),
    ownerName: name,
    avatar: input.avatar ?? '',
    plan: 'free',
    createdAt: Date.now(),
    authTokenHash: hashSecret(authToken),
  };
  const apiKey = newApiKey(workspace.id, defaultApiKeyName(email), 'testing');
  const { record: firstToken } = await newAuthToken(apiKey.id, workspace.id);
  const writes: TransactItem[] = [putWorkspaceItem(workspace), putApiKeyItem(apiKey), putAuthTokenItem(firstToken)];

  let registry = await getEmailRegistry(email);
  if (!registry) {
    // Root workspace: the registry must not exist yet. Losing that race sends us to the additional-workspace path.
    try {
      await transactWrite([
        named(claimWorkspaceNameItem(email, workspaceName, workspace.id), nameTaken),
        named(createEmailRegistryItem(email, workspace.id), () => new RegisteredMeanwhile()),
        ...writes,
      ]);
      return { workspace, authToken, apiKey };
    } catch (error) {
      if (!(error instanceof RegisteredMeanwhile)) throw error;
      registry = await getEmailRegistry(email);
      if (!registry) throw error;
    }
  }
  await transactWrite([
    named(claimWorkspaceNameItem(email, workspaceName, workspace.id), nameTaken),
    named(
      requirePaidPlanItem(registry.rootWorkspaceId),
      () =>
        new PermissionDeniedError(
          'An additional workspace requires the root workspace of this email to be on a paid plan.',
        ),
    ),
    named(
      countAnotherWorkspaceItem(email),
      () => new ResourceExhaustedError(`An email may own at most ${MAX_WORKSPACES_PER_EMAIL} workspaces.`),
    ),
    ...writes,
  ]);
  return { workspace, authToken, apiKey };
}

/** The owner's id is the same in every workspace of the email, without storing a mapping. */
function ownerIdOf(email: string): string {
  return `usr_${createHash('sha256').update(email).digest('hex').slice(0, 24)}`;
}

/** Another request registered the email's root workspace first: this one becomes an additional workspace. */
class RegisteredMeanwhile extends Error {}

function nameTaken(): AlreadyExistsError {
  return new AlreadyExistsError('A workspace with this name already exists for this email.');
}

/**
 * Counts a creation attempt from `sourceIp` (docs/decisions.md §3: per IP per hour, WORKSPACE_CREATE_LIMIT_PER_HOUR,
 * 0 disables). Throws ResourceExhaustedError with Retry-After when the hour's allowance is spent.
 */
export async function enforceCreateRateLimit(sourceIp: string): Promise<void> {
  const limit = config.workspaceCreateLimitPerHour;
  if (limit === 0) return;
  const decision = await consumeRateLimit('workspace-create', sourceIp || 'unknown', limit, 3600);
  if (!decision.allowed) {
    throw new ResourceExhaustedError('Too many requests. Please try again later.', decision.retryAfterSeconds);
  }
}
