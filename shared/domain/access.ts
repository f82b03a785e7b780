/**
 * Effective access of a user to a document (docs/decisions.md §4), the one function every "users with access" rule uses:
 *
 *   none when the document is disabled; otherwise the highest role among document membership, active document
 *   permission, folder membership or active folder permission (when the document is in that folder), and —
 *   unless the document is `restricted` — organization membership or active organization permission.
 *   `editor` outranks `viewer`.
 */
import { batchGet, byKey, keyString } from '../db/batch';
import { membershipKey, toMembership, type Role } from '../db/membership';
import { grantKey, isActive, toGrant, type Grant, type Resource } from '../db/permission';
import { getDocument, type AccessType } from '../db/organization';

export interface AccessFacts {
  document: { disabled: boolean; accessType: AccessType; folderId?: string };
  documentMembership?: Role;
  documentPermission?: Pick<Grant, 'accessRole' | 'expiresAt'>;
  /** Membership and permission on the folder the document is in (ignored when it is in none). */
  folderMembership?: Role;
  folderPermission?: Pick<Grant, 'accessRole' | 'expiresAt'>;
  organizationMembership?: Role;
  organizationPermission?: Pick<Grant, 'accessRole' | 'expiresAt'>;
}

const RANK: Record<Role, number> = { viewer: 1, editor: 2 };

function highest(roles: Array<Role | undefined>): Role | null {
  let best: Role | null = null;
  for (const role of roles) if (role && (best === null || RANK[role] > RANK[best])) best = role;
  return best;
}

/** The user's role on the document at `now` (ms), or null for no access. */
export function effectiveAccess(facts: AccessFacts, now: number): Role | null {
  if (facts.document.disabled) return null;
  const granted = (grant?: Pick<Grant, 'accessRole' | 'expiresAt'>) =>
    grant && isActive(grant, now) ? grant.accessRole : undefined;
  const inFolder = facts.document.folderId !== undefined;
  const viaOrganization = facts.document.accessType !== 'restricted';
  return highest([
    facts.documentMembership,
    granted(facts.documentPermission),
    inFolder ? facts.folderMembership : undefined,
    inFolder ? granted(facts.folderPermission) : undefined,
    viaOrganization ? facts.organizationMembership : undefined,
    viaOrganization ? granted(facts.organizationPermission) : undefined,
  ]);
}

/**
 * Effective access of each of `userIds` to one document: one read of the document and one BatchGet of up to six
 * items per user (memberships and grants at the three levels). A missing document gives everyone null.
 */
export async function accessOfUsers(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  userIds: readonly string[],
  now = Date.now(),
): Promise<Map<string, Role | null>> {
  const document = await getDocument(apiKeyId, organizationId, documentId);
  const result = new Map<string, Role | null>();
  if (!document) {
    for (const userId of userIds) result.set(userId, null);
    return result;
  }
  const folderId = document.folderId;
  const resources = {
    document: { type: 'document', id: documentId, organizationId } as Resource,
    folder: folderId === undefined ? undefined : ({ type: 'folder', id: folderId, organizationId } as Resource),
    organization: { type: 'organization', id: organizationId, organizationId } as Resource,
  };
  const keysOf = (userId: string) => ({
    documentMembership: membershipKey(apiKeyId, organizationId, { type: 'document', id: documentId }, userId),
    folderMembership:
      folderId === undefined
        ? undefined
        : membershipKey(apiKeyId, organizationId, { type: 'folder', id: folderId }, userId),
    organizationMembership: membershipKey(apiKeyId, organizationId, { type: 'organization' }, userId),
    documentPermission: grantKey(apiKeyId, userId, resources.document),
    folderPermission: resources.folder === undefined ? undefined : grantKey(apiKeyId, userId, resources.folder),
    organizationPermission: grantKey(apiKeyId, userId, resources.organization),
  });
  const found = byKey(
    await batchGet(userIds.flatMap((userId) => Object.values(keysOf(userId)).filter((k) => k !== undefined))),
  );
  for (const userId of userIds) {
    const keys = keysOf(userId);
    const item = (k?: { pk: string; sk: string }) => (k === undefined ? undefined : found.get(keyString(k)));
    const role = (k?: { pk: string; sk: string }) => {
      const membership = item(k);
      return membership ? toMembership(membership).accessRole : undefined;
    };
    const grant = (k?: { pk: string; sk: string }) => {
      const stored = item(k);
      return stored ? toGrant(stored) : undefined;
    };
    result.set(
      userId,
      effectiveAccess(
        {
          document,
          documentMembership: role(keys.documentMembership),
          documentPermission: grant(keys.documentPermission),
          folderMembership: role(keys.folderMembership),
          folderPermission: grant(keys.folderPermission),
          organizationMembership: role(keys.organizationMembership),
          organizationPermission: grant(keys.organizationPermission),
        },
        now,
      ),
    );
  }
  return result;
}
