/**
 * Sending to live connections (decisions §13): one protocol message to one connection in its encoding (a binary
 * frame, or base64 text frames chunked for API Gateway's limits, shared/domain/live/framing.ts), to a room, and
 * closing connections with the reason said first. Every sender of the service goes through here: the message
 * handler, the REST writes of CRDT data, the migration.
 *
 * Access while connected: before the room is sent anything, members whose access was last checked more than
 * ACCESS_RECHECK_MS ago are checked again, so that no connection receives data more than a minute after its
 * user lost access, even one that never sends anything (its own messages check it more often, see connections.ts).
 */
import { randomBytes } from 'node:crypto';
import { ConnectionGoneError, closeConnection, connectionIsOpen, sendFrame } from '../../adapters/live/connections';
import { logger } from '../../core/logger';
import { LIVE_METRICS, countLive, countRefusal, type RefusalReason } from '../../core/metrics';
import { closeMember, deleteTombstones, documentConnections, isOpen, recordAccessCheck, roomMembers, type LiveEditorRef, type LiveEncoding, type RoomMember } from '../../db/live-connection';
import type { Role } from '../../db/membership';
import { accessOfUsers } from '../access';
import { encodeFrames } from './framing';
import { awarenessMessage, permissionDeniedMessage, updateMessage, type AwarenessEntry } from './protocol';

/** Members unchecked for this long are checked before they are sent anything: within decisions §13's 60 s. */
export const ACCESS_RECHECK_MS = 50_000;
/** At most this many connections per editor (decisions §13); the next is refused with `Room is full.`. */
export const MAX_ROOM_CONNECTIONS = 100;

/** A connection to send to: its id and how it frames messages. */
export interface Recipient {
  connectionId: string;
  encoding: LiveEncoding;
}

const messageId = () => randomBytes(6).toString('base64url');

/** Sends one protocol message. Throws ConnectionGoneError when the connection is closed. */
export async function sendMessage(to: Recipient, message: Uint8Array): Promise<void> {
  if (to.encoding === 'binary') {
    await sendFrame(to.connectionId, message);
    return;
  }
  // Chunks of one message go in order; a reader reassembles them whatever else arrives between.
  for (const frame of encodeFrames(message, messageId())) await sendFrame(to.connectionId, frame);
}

/** Says why in the auth message, then closes the connection. A connection already gone is closed. */
export async function refuse(to: Recipient, reason: string): Promise<void> {
  try {
    await sendMessage(to, permissionDeniedMessage(reason));
  } catch (error) {
    if (!(error instanceof ConnectionGoneError)) throw error;
  }
  await closeConnection(to.connectionId);
}

/** The user's role on the document now (decisions §4), or null without access. */
export async function liveRoleOf(ref: Omit<LiveEditorRef, 'editorId'>, userId: string, now = Date.now()): Promise<Role | null> {
  const roles = await accessOfUsers(ref.apiKeyId, ref.organizationId, ref.documentId, [userId], now);
  return roles.get(userId) ?? null;
}

/**
 * The members that may be sent to now: those checked within ACCESS_RECHECK_MS, and the others after a check (one
 * access read for all of them); a member whose user lost access is refused and removed, one whose role changed
 * gets it recorded.
 */
export async function currentMembers(ref: LiveEditorRef, members: readonly RoomMember[], now = Date.now()): Promise<RoomMember[]> {
  const stale = members.filter((member) => now - member.checkedAt > ACCESS_RECHECK_MS);
  if (stale.length === 0) return [...members];
  const roles = await accessOfUsers(ref.apiKeyId, ref.organizationId, ref.documentId, [...new Set(stale.map((member) => member.userId))], now);
  const removed = new Set<string>();
  await Promise.all(
    stale.map(async (member) => {
      const role = roles.get(member.userId) ?? null;
      if (role === null) {
        removed.add(member.connectionId);
        await removeMember(ref, member, 'User has no access to this document.');
      } else {
        member.role = role;
        member.checkedAt = now;
        await recordAccessCheck(ref, member.connectionId, role, now);
      }
    }),
  );
  return members.filter((member) => !removed.has(member.connectionId));
}

/** How a member's connection ended: whether its access ended (its late messages are then dropped). */
export interface Closing {
  revoked: boolean;
  /** Client ids another connection has taken over: not announced as gone. */
  kept?: ReadonlySet<number>;
}

/**
 * Refuses a member (the reason in the auth message, then closed) and closes its room entry (see memberClosed).
 * `kind` classes the reason for the live metrics (LiveRefusals); by default the user's access ended.
 */
export async function removeMember(ref: LiveEditorRef, member: Recipient, reason: string, closing: Closing = { revoked: true }, kind: RefusalReason = 'access'): Promise<void> {
  countRefusal(kind);
  await refuse(member, reason);
  await memberClosed(ref, member.connectionId, closing);
}

/**
 * Marks a member's connection closed (its entry becomes a tombstone) and, when this call is the one that closed it,
 * tells the room's open members that its clients left, at a clock above every clock relayed for them (decisions §13):
 * presence is recorded before it is relayed, and not at all once the entry is closed, so the recorded clock is the
 * highest relayed. Tombstones past their time are removed on the way.
 */
export async function memberClosed(ref: LiveEditorRef, connectionId: string, closing: Closing, now = Date.now()): Promise<void> {
  const closed = await closeMember(ref, connectionId, { revoked: closing.revoked }, now);
  if (closed === undefined) return;
  const left = departureOf(closed).filter((entry) => !(closing.kept?.has(entry.clientId) ?? false));
  const members = await roomMembers(ref);
  await deleteTombstones(ref, members, now);
  const rest = members.filter((member) => isOpen(member) && member.connectionId !== connectionId);
  if (left.length === 0 || rest.length === 0) return;
  await sendToMembers(ref, rest, awarenessMessage(left));
}

/** Sending to some live connections failed for another reason than their being gone: they were closed to resync. */
export class RelayFailedError extends Error {
  constructor(readonly connectionIds: readonly string[], readonly cause: unknown) {
    super(`A live message could not be sent to ${connectionIds.length} connection(s); they were closed so that they resync.`);
  }
}

/**
 * Sends one message to each of `members` side by side. A member that is gone (API Gateway's GoneException) is
 * closed, never retried, and the others are told its clients left. A member the message could not reach for any
 * other reason would miss it for good (a client resyncs only when it reconnects), so it is closed and reconnects.
 * @throws RelayFailedError after every member was tried, when such a failure happened (the message counts as failed).
 */
export async function sendToMembers(ref: LiveEditorRef, members: readonly RoomMember[], message: Uint8Array): Promise<void> {
  const gone: RoomMember[] = [];
  const failed: RoomMember[] = [];
  let cause: unknown;
  await Promise.all(
    members.map(async (member) => {
      try {
        await sendMessage(member, message);
      } catch (error) {
        if (error instanceof ConnectionGoneError) {
          gone.push(member);
          return;
        }
        failed.push(member);
        cause = error;
      }
    }),
  );
  countLive(LIVE_METRICS.relayFailures, failed.length);
  await Promise.all(failed.map((member) => closeConnection(member.connectionId).catch((error: unknown) => logger.error('Live connection not closed.', { error, connectionId: member.connectionId }))));
  await Promise.all(gone.map((member) => memberClosed(ref, member.connectionId, { revoked: false })));
  if (failed.length > 0) throw new RelayFailedError(failed.map((member) => member.connectionId), cause);
}

/**
 * The null-state presence of a member's clients: what tells the others they left, at one above the clock recorded
 * (a client id whose goodbye was recorded already is left out: the others have it).
 */
export function departureOf(member: RoomMember): AwarenessEntry[] {
  return Object.entries(member.presence)
    .filter(([, presence]) => presence.state !== 'null')
    .map(([clientId, presence]) => ({ clientId: Number(clientId), clock: presence.clock + 1, state: 'null' }));
}

/**
 * The members among `suspects` whose connection is still open; the others (entries left by a connection whose
 * `$disconnect` never ran) are closed and the room told their clients left, except the client ids in `kept`. For the
 * rare moments a stale entry matters: a room that looks full, a client id another entry still holds.
 */
export async function openMembers(ref: LiveEditorRef, suspects: readonly RoomMember[], kept?: ReadonlySet<number>): Promise<RoomMember[]> {
  const candidates = suspects.filter(isOpen);
  const open = await Promise.all(candidates.map((member) => connectionIsOpen(member.connectionId)));
  await Promise.all(candidates.filter((_, index) => !open[index]).map((member) => memberClosed(ref, member.connectionId, { revoked: false, ...(kept === undefined ? {} : { kept }) })));
  return candidates.filter((_, index) => open[index]);
}

/** Closes every live connection of a document, saying why (a migration starts: decisions §13). */
export async function closeDocumentConnections(ref: Omit<LiveEditorRef, 'editorId'>, reason: string): Promise<void> {
  const members = await documentConnections(ref);
  await Promise.all(members.map((member) => removeMember({ ...ref, editorId: member.editorId }, member, reason, { revoked: true }, 'migration')));
}

/**
 * Sends an editor's change made outside the live connections (a REST add or update) to its open connections, as a
 * Yjs update. Best effort after the write has committed: a failure is logged, never the request's (a client that
 * missed it gets it from its next sync).
 */
export async function relayEditorChange(ref: LiveEditorRef, update: Uint8Array): Promise<void> {
  try {
    const members = (await roomMembers(ref)).filter(isOpen);
    if (members.length === 0) return;
    await sendToMembers(ref, await currentMembers(ref, members), updateMessage(update));
  } catch (error) {
    logger.error('An editor change was not sent to its live connections (those it could not reach were closed to resync).', { error, editorId: ref.editorId });
  }
}
