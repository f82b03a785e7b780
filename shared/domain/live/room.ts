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
import { deleteConnection, documentConnections, recordAccessCheck, roomMembers, type LiveEditorRef, type LiveEncoding, type RoomMember } from '../../db/live-connection';
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

/** Refuses a member and removes its items (its own $disconnect finds nothing left to do). */
export async function removeMember(ref: LiveEditorRef, member: Recipient, reason: string): Promise<void> {
  await refuse(member, reason);
  await deleteConnection(ref, member.connectionId);
}

/**
 * Sends one message to each of `members` side by side. A member that is gone (API Gateway's GoneException) is
 * removed, never retried, and the others are told its clients left; any other failure is logged and skipped (the
 * client catches up when it resyncs).
 */
export async function sendToMembers(ref: LiveEditorRef, members: readonly RoomMember[], message: Uint8Array): Promise<void> {
  const gone: RoomMember[] = [];
  await Promise.all(
    members.map(async (member) => {
      try {
        await sendMessage(member, message);
      } catch (error) {
        if (error instanceof ConnectionGoneError) gone.push(member);
        else logger.warn('Live message not sent to a connection.', { error, connectionId: member.connectionId });
      }
    }),
  );
  if (gone.length > 0) await removeGone(ref, gone, members.filter((member) => !gone.includes(member)));
}

/** The null-state presence of a member's clients: what tells the others they left. */
export function departureOf(member: RoomMember): AwarenessEntry[] {
  return Object.entries(member.presence)
    .filter(([, presence]) => presence.state !== 'null')
    .map(([clientId, presence]) => ({ clientId: Number(clientId), clock: presence.clock, state: 'null' }));
}

/**
 * Removes members found gone and tells `rest` their clients left (one message, never retried), except the client
 * ids in `kept` (taken over by another connection).
 */
async function removeGone(ref: LiveEditorRef, gone: readonly RoomMember[], rest: readonly RoomMember[], kept: ReadonlySet<number> = new Set()): Promise<void> {
  await Promise.all(gone.map((member) => deleteConnection(ref, member.connectionId)));
  const left = gone.flatMap(departureOf).filter((entry) => !kept.has(entry.clientId));
  if (left.length === 0 || rest.length === 0) return;
  const message = awarenessMessage(left);
  await Promise.all(rest.map((member) => sendMessage(member, message).catch(() => undefined)));
}

/**
 * The members among `suspects` whose connection is still open; the others (items left by a connection whose
 * `$disconnect` never ran) are removed and the room told their clients left. For the rare moments a stale entry
 * matters: a room that looks full, a client id another entry still holds.
 */
export async function openMembers(ref: LiveEditorRef, suspects: readonly RoomMember[], rest: readonly RoomMember[], kept?: ReadonlySet<number>): Promise<RoomMember[]> {
  const open = await Promise.all(suspects.map((member) => connectionIsOpen(member.connectionId)));
  const gone = suspects.filter((_, index) => !open[index]);
  if (gone.length > 0) await removeGone(ref, gone, rest, kept);
  return suspects.filter((_, index) => open[index]);
}

/** Closes every live connection of a document, saying why (a migration starts: decisions §13). */
export async function closeDocumentConnections(ref: Omit<LiveEditorRef, 'editorId'>, reason: string): Promise<void> {
  const members = await documentConnections(ref);
  await Promise.all(members.map((member) => removeMember({ ...ref, editorId: member.editorId }, member, reason)));
}

/**
 * Sends an editor's change made outside the live connections (a REST add or update) to its open connections, as a
 * Yjs update. Best effort after the write has committed: a failure is logged, never the request's (a client that
 * missed it gets it from its next sync).
 */
export async function relayEditorChange(ref: LiveEditorRef, update: Uint8Array): Promise<void> {
  try {
    const members = await roomMembers(ref);
    if (members.length === 0) return;
    await sendToMembers(ref, await currentMembers(ref, members), updateMessage(update));
  } catch (error) {
    logger.warn('An editor change was not sent to its live connections.', { error, editorId: ref.editorId });
  }
}
