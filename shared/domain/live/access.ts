/**
 * Access of live connections (decisions §13 "Nothing lost, nothing stale"), in one place: the role a user has on a
 * document now, and the three paths that check it again while a connection is open.
 *
 * - Its own messages: when its last check is older than LIVE_ACCESS_CHECK_SECONDS (`config.liveAccessCheckMs`, at
 *   most 30 s), before the message is handled (`checkOwnAccess`).
 * - Push: a REST change that removes or lowers access reaches the connections it concerns through the table's
 *   stream (revocation.ts `recheckScope`).
 * - Backstop: a scheduled pass re-checks every connection unchecked for ACCESS_RECHECK_MS, silent ones too
 *   (revocation.ts `recheckDueConnections`, with `backstopMaxAgeMs` for its period), so that none goes longer than
 *   ACCESS_BOUND_MS.
 *
 * A relay to the room reads nobody's access: the cost of a frame stays the same whatever the room's size (issue 30).
 */
import { config } from '../../core/config';
import {
  recordAccessCheck,
  rememberMember,
  type LiveConnection,
  type LiveEditorRef,
  type RoomMember,
} from '../../db/live-connection';
import type { Role } from '../../db/membership';
import { accessOfUsers } from '../access';
import { removeMember } from './room';

/** The reason a connection hears when its access has ended. */
export const NO_ACCESS = 'User has no access to this document.';

/** Decisions §13: no open connection goes longer than this without its access checked. */
export const ACCESS_BOUND_MS = 60_000;

/** Connections unchecked for this long are checked by the backstop pass: within ACCESS_BOUND_MS. */
export const ACCESS_RECHECK_MS = 50_000;

/**
 * How old a connection's last check may be when a backstop pass meets it, for passes `periodMs` apart: one checked
 * just too recently for this pass is checked by the next, so age plus period stays within ACCESS_BOUND_MS (50 s for
 * the local stack's 10-s passes; 0 for AWS's one-minute rule, so there each pass re-checks every connection).
 */
export const backstopMaxAgeMs = (periodMs: number): number =>
  Math.max(0, Math.min(ACCESS_RECHECK_MS, ACCESS_BOUND_MS - periodMs));

/** The user's role on the document now (decisions §4), or null without access. */
export async function liveRoleOf(
  ref: Omit<LiveEditorRef, 'editorId'>,
  userId: string,
  now = Date.now(),
): Promise<Role | null> {
  const roles = await accessOfUsers(ref.apiKeyId, ref.organizationId, ref.documentId, [userId], now);
  return roles.get(userId) ?? null;
}

/**
 * Checks the access of a connection about to have its message handled, when its last check is older than
 * LIVE_ACCESS_CHECK_SECONDS: without access it is refused and closed (false: handle nothing more of it); a role
 * that changed is recorded, and `self` updated. True when the message may be handled.
 */
export async function checkOwnAccess(connection: LiveConnection, self: RoomMember, now: number): Promise<boolean> {
  if (now - self.checkedAt <= config.liveAccessCheckMs) return true;
  const role = await liveRoleOf(connection, connection.userId, now);
  if (role === null) {
    await removeMember(connection, self, NO_ACCESS);
    return false;
  }
  self.role = role;
  self.checkedAt = now;
  await recordAccessCheck(connection, connection.connectionId, role, now);
  rememberMember(connection, self);
  return true;
}
