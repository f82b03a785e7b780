/**
 * Permission rules (docs/api-spec.md "Add Permissions" and the Permission resource table, docs/decisions.md §4 and §10):
 * which organization a resource belongs to, the default role, expiry in the future, no resource twice, and
 * reads that never show an expired grant.
 */
import { keyString } from '../db/batch';
import type { Role } from '../db/membership';
import { deleteItem } from '../db/transact';
import {
  getGrants,
  grantKey,
  isActive,
  listActiveGrants,
  putGrantItem,
  type Grant,
  type Resource,
  type ResourceType,
} from '../db/permission';
import { batchResult, notWritten, reportOf, type BatchResult } from './batch-result';
import { invalidFields, type FieldIssue } from '../core/errors';
import {
  assertDocumentsWritable,
  fitsOneTransaction,
  writeGroupsAtomically,
  writeGroupsGuarded,
  type DocumentRef,
} from './document-locks';

/** A resource as the client names it: `organizationId` may be left out for an organization. */
export interface ResourceInput {
  type: ResourceType;
  id: string;
  organizationId?: string;
}

export interface PermissionInput extends ResourceInput {
  accessRole?: Role;
  /** Unix seconds. */
  expiresAt?: number;
}

/** A grant as Get Permissions shows it (docs/decisions.md §10). */
export interface PermissionView {
  type: ResourceType;
  id: string;
  organizationId: string;
  accessRole: Role;
  expiresAt?: number;
}

/**
 * The organization of each resource: required for documents and folders; for an organization it is the id
 * itself (and, when given, must equal it). Also refuses a resource named twice, since the second would
 * silently overwrite the first. Throws InvalidArgumentError listing every problem.
 */
function resolveResources<T extends ResourceInput>(
  inputs: readonly T[],
  path: string,
  extra?: (input: T, at: string) => FieldIssue[],
) {
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  const resolved = inputs.map((input, index) => {
    const at = `${path}.${index}`;
    let organizationId = input.organizationId;
    if (input.type === 'organization') {
      if (organizationId !== undefined && organizationId !== input.id) {
        issues.push({ path: `${at}.organizationId`, message: 'Must equal id for type organization.' });
      }
      organizationId = input.id;
    } else if (organizationId === undefined) {
      issues.push({ path: `${at}.organizationId`, message: `Required for type ${input.type}.` });
    }
    // JSON of the triple: no separator inside an id can make two different resources look alike.
    const identity = JSON.stringify([input.type, organizationId ?? null, input.id]);
    if (seen.has(identity)) issues.push({ path: at, message: 'Must not repeat a resource.' });
    seen.add(identity);
    issues.push(...(extra?.(input, at) ?? []));
    return { ...input, organizationId: organizationId ?? '' };
  });
  if (issues.length > 0) throw invalidFields(issues);
  return resolved;
}

const RESOURCES_PATH = 'data.permissions.resources';

/** The grants a request asks for at `now` (ms); throws InvalidArgumentError when any resource breaks a rule. */
export function grantsToAdd(userId: string, inputs: readonly PermissionInput[], now: number): Grant[] {
  const pastExpiry = (input: PermissionInput, at: string): FieldIssue[] =>
    input.expiresAt !== undefined && input.expiresAt * 1000 <= now
      ? [{ path: `${at}.expiresAt`, message: 'Must be in the future (Unix seconds).' }]
      : [];
  return resolveResources(inputs, RESOURCES_PATH, pastExpiry).map((resource) => ({
    userId,
    type: resource.type,
    id: resource.id,
    organizationId: resource.organizationId,
    accessRole: resource.accessRole ?? 'editor',
    expiresAt: resource.expiresAt,
  }));
}

/** The document a grant concerns, whose migration lock a change to it checks. */
const lockedBy = (resource: Resource): DocumentRef[] =>
  resource.type === 'document' ? [{ organizationId: resource.organizationId, documentId: resource.id }] : [];

/**
 * Grants every resource to the user, all or nothing: in one transaction with a migration-lock check per document
 * resource when they fit (one transaction holds 100 items), else in several, with the grants as they were read
 * first, so that a failure part way puts back what the earlier transactions changed. A grant already there is
 * replaced: its role and expiry become the new ones. Throws InvalidArgumentError, and FailedPreconditionError
 * when a document is being migrated.
 */
export async function addPermissions(
  apiKeyId: string,
  userId: string,
  inputs: readonly PermissionInput[],
  now = Date.now(),
) {
  const grants = grantsToAdd(userId, inputs, now);
  await assertDocumentsWritable(apiKeyId, grants.flatMap(lockedBy));
  const groups = grants.map((grant) => ({ items: [putGrantItem(apiKeyId, grant)], documents: lockedBy(grant) }));
  if (fitsOneTransaction(groups)) {
    await writeGroupsGuarded(apiKeyId, groups);
    return;
  }
  const before = new Map(
    (await getGrants(apiKeyId, userId, grants)).map((grant) => [keyString(grantKey(apiKeyId, userId, grant)), grant]),
  );
  await writeGroupsAtomically(
    apiKeyId,
    groups.map((group, i) => {
      const prior = before.get(keyString(grantKey(apiKeyId, userId, grants[i])));
      return {
        ...group,
        undo: [prior === undefined ? deleteItem(grantKey(apiKeyId, userId, grants[i])) : putGrantItem(apiKeyId, prior)],
      };
    }),
  );
}

/** The user's grants that count at `now` (ms), all or in one organization, ordered by organization, then type and id. */
export async function activePermissions(
  apiKeyId: string,
  userId: string,
  organizationId: string | undefined,
  now = Date.now(),
): Promise<PermissionView[]> {
  const grants = await listActiveGrants(apiKeyId, userId, organizationId, now);
  return grants.map(({ type, id, organizationId: org, accessRole, expiresAt }) => ({
    type,
    id,
    organizationId: org,
    accessRole,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  }));
}

/**
 * Removes the user's grants on `inputs`, keyed by resource id. A grant that has expired is deleted too but
 * reported as not existing, the same view Get Permissions gives. Throws InvalidArgumentError, and
 * FailedPreconditionError when a document is being migrated.
 */
export async function removePermissions(
  apiKeyId: string,
  userId: string,
  inputs: readonly ResourceInput[],
  now = Date.now(),
): Promise<BatchResult<{ success: boolean; message: string }>> {
  const resources: Resource[] = resolveResources(inputs, RESOURCES_PATH).map(({ type, id, organizationId }) => ({
    type,
    id,
    organizationId,
  }));
  await assertDocumentsWritable(apiKeyId, resources.flatMap(lockedBy));
  const stored = await getGrants(apiKeyId, userId, resources);
  const report = await reportOf(
    writeGroupsGuarded(
      apiKeyId,
      stored.map((grant) => ({ items: [deleteItem(grantKey(apiKeyId, userId, grant))], documents: lockedBy(grant) })),
    ),
  );
  const identity = (resource: Resource) => JSON.stringify([resource.type, resource.organizationId, resource.id]);
  const removed = new Map(
    stored.map((grant, i) => [identity(grant), { active: isActive(grant, now), written: report.written(i) }]),
  );
  return batchResult(
    resources,
    (resource) => resource.id,
    (resource) => {
      const grant = removed.get(identity(resource));
      if (grant === undefined || !grant.active) return { success: false, message: 'Permission does not exist.' };
      return grant.written ? { success: true, message: 'Permission removed.' } : notWritten(report.failure);
    },
  );
}
