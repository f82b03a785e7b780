/**
 * Revocation that does not wait for a connection to speak (decisions §13 "Nothing lost, nothing stale"). Two paths
 * re-check open connections whatever their traffic:
 *
 * - push: a REST change that removes or lowers access reaches the table's stream; the live-revocation consumer
 *   (shared/domain/stream/live-revocation.ts) names what it concerns (`accessScopeOf`: a user in an organization, or
 *   everyone on a document) and re-checks those connections (`recheckScope`), found by one Query each;
 * - backstop: a grant that expires by time writes nothing, so a scheduled pass (`recheckDueConnections`) re-checks
 *   the connections whose last check is older than ACCESS_RECHECK_MS, read from the check index shard by shard.
 *
 * A re-check resolves the user's role with `liveRoleOf` (once per user and document); without access the connection
 * hears `[2, 0, reason]` and is closed (`removeMember`), and a changed role is recorded (`recordAccessCheck`): the
 * message path drops a viewer's updates using the room entry's role, so an editor lowered to viewer is read-only
 * from then on. Every step is safe to repeat (a stream record handed twice, a pass racing a close).
 */
import { forEachLimited } from '../../core/concurrency';
import { logger } from '../../core/logger';
import type { ItemChange } from '../../db/item-change';
import {
  ACCESS_CHECK_SHARDS,
  connectionsDueForCheck,
  documentConnections,
  recordAccessCheck,
  scheduleAccessCheck,
  userConnections,
  type IndexedMember,
} from '../../db/live-connection';
import type { Role } from '../../db/membership';
import { ACCESS_RECHECK_MS, NO_ACCESS, liveRoleOf } from './access';
import { removeMember } from './room';

/** What a change of access concerns: one user's connections in an organization, or every connection of a document. */
export type AccessScope =
  | { apiKeyId: string; organizationId: string; userId: string; documentId?: undefined }
  | { apiKeyId: string; organizationId: string; documentId: string; userId?: undefined };

/** What a re-check did. */
export interface RecheckOutcome {
  checked: number;
  closed: number;
  /** Connections whose recorded role changed (editor to viewer, or back). */
  changed: number;
}

const NOTHING: RecheckOutcome = { checked: 0, closed: 0, changed: 0 };
const sum = (outcomes: readonly RecheckOutcome[]): RecheckOutcome =>
  outcomes.reduce(
    (total, outcome) => ({
      checked: total.checked + outcome.checked,
      closed: total.closed + outcome.closed,
      changed: total.changed + outcome.changed,
    }),
    NOTHING,
  );

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
const RANK: Record<string, number> = { viewer: 1, editor: 2 };
const lowered = (before: unknown, after: unknown) => (RANK[String(before)] ?? 0) > (RANK[String(after)] ?? 0);

/**
 * The connections a change of the table may take access from, or undefined when it gives none away: a membership,
 * grant or group membership removed; a membership's or grant's role lowered, or a grant given an earlier expiry; a
 * document disabled, or its access type or folder changed. A change that only adds access concerns nobody.
 */
export function accessScopeOf(change: ItemChange): AccessScope | undefined {
  const before = change.oldImage;
  const after = change.newImage;
  const apiKeyId = change.apiKeyId;
  if (apiKeyId === undefined || before === undefined) return undefined;
  const userScope = (): AccessScope | undefined => {
    const organizationId = text(before.organizationId);
    const userId = text(before.userId);
    return organizationId === undefined || userId === undefined ? undefined : { apiKeyId, organizationId, userId };
  };
  switch (change.kind) {
    case 'membership':
      if (change.eventName === 'REMOVE' || lowered(before.accessRole, after?.accessRole)) return userScope();
      return undefined;
    case 'grant': {
      if (change.eventName === 'REMOVE' || lowered(before.accessRole, after?.accessRole)) return userScope();
      const expiryBefore = typeof before.expiresAt === 'number' ? before.expiresAt : Infinity;
      const expiryAfter = typeof after?.expiresAt === 'number' ? after.expiresAt : Infinity;
      return expiryAfter < expiryBefore ? userScope() : undefined;
    }
    case 'groupMember':
      return change.eventName === 'REMOVE' ? userScope() : undefined;
    case 'document': {
      if (change.eventName !== 'MODIFY' || after === undefined) return undefined;
      const organizationId = text(after.organizationId);
      const documentId = text(after.documentId);
      const tighter =
        after.disabled === true || before.accessType !== after.accessType || before.folderId !== after.folderId;
      return organizationId === undefined || documentId === undefined || !tighter
        ? undefined
        : { apiKeyId, organizationId, documentId };
    }
    default:
      return undefined;
  }
}

/** A scope as a string, so that the changes of one batch that concern the same connections re-check them once. */
export const scopeKey = (scope: AccessScope): string =>
  JSON.stringify([scope.apiKeyId, scope.organizationId, scope.userId ?? null, scope.documentId ?? null]);

/** Re-checks the open connections of a scope (one Query to find them). Throws what a read or a send throws. */
export async function recheckScope(scope: AccessScope, now = Date.now()): Promise<RecheckOutcome> {
  if (scope.userId !== undefined)
    return recheck(await userConnections(scope.apiKeyId, scope.organizationId, scope.userId), now);
  const ref = { apiKeyId: scope.apiKeyId, organizationId: scope.organizationId, documentId: scope.documentId };
  const members = await documentConnections(ref);
  return recheck(
    members.map((member) => ({ ref: { ...ref, editorId: member.editorId }, member })),
    now,
  );
}

/** Connections re-checked at once per scope or shard: a large organization's users or a busy shard queue up. */
const RECHECKS_AT_ONCE = 25;

/**
 * Re-checks connections, RECHECKS_AT_ONCE at a time: one role resolution per user and document, then each connection
 * closed (no access), or its role and check time recorded and `kept` called for it. Throws the first failure after
 * every connection was tried.
 */
async function recheck(
  entries: readonly IndexedMember[],
  now: number,
  kept?: (entry: IndexedMember) => Promise<unknown>,
): Promise<RecheckOutcome> {
  const roles = new Map<string, Promise<Role | null>>();
  const roleOf = ({ ref, member }: IndexedMember) => {
    const id = JSON.stringify([ref.apiKeyId, ref.organizationId, ref.documentId, member.userId]);
    let role = roles.get(id);
    if (role === undefined) {
      role = liveRoleOf(ref, member.userId, now);
      roles.set(id, role);
    }
    return role;
  };
  const outcome = { checked: 0, closed: 0, changed: 0 };
  await forEachLimited(entries, RECHECKS_AT_ONCE, async (entry) => {
    const role = await roleOf(entry);
    if (role === null) {
      await removeMember(entry.ref, entry.member, NO_ACCESS);
      logger.info('Live connection closed: its user has no access any more.', {
        connectionId: entry.member.connectionId,
      });
      outcome.checked += 1;
      outcome.closed += 1;
      return;
    }
    const open = await recordAccessCheck(entry.ref, entry.member.connectionId, role, now);
    if (open && kept !== undefined) await kept(entry);
    outcome.checked += 1;
    if (open && role !== entry.member.role) outcome.changed += 1;
  });
  return outcome;
}

/**
 * The backstop pass: re-checks, in every shard of the check index, the connections whose last check is older than
 * `maxAge` (one Query per shard reads only those). An entry whose connection's own messages checked it since is
 * moved on without an access read. A failure is logged and the entries not done stay due for the next pass.
 */
export async function recheckDueConnections(now = Date.now(), maxAge = ACCESS_RECHECK_MS): Promise<RecheckOutcome> {
  const before = now - maxAge;
  const shards = Array.from({ length: ACCESS_CHECK_SHARDS }, (_, shard) => shard);
  const outcomes = await Promise.all(
    shards.map(async (shard) => {
      try {
        const due = await connectionsDueForCheck(shard, before);
        const checkedSince = due.filter(({ member }) => member.checkedAt >= before);
        const stale = due.filter(({ member }) => member.checkedAt < before);
        await forEachLimited(checkedSince, RECHECKS_AT_ONCE, async ({ ref, member }) => {
          await scheduleAccessCheck(ref, member.connectionId, member.checkedAt);
        });
        return await recheck(stale, now, ({ ref, member }) => scheduleAccessCheck(ref, member.connectionId, now));
      } catch (error) {
        logger.warn('Live access backstop: some connections were not re-checked; the next pass tries again.', {
          error,
          shard,
        });
        return NOTHING;
      }
    }),
  );
  return sum(outcomes);
}
