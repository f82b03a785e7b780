/**
 * Sending to live connections (decisions §13): one protocol message to one connection in its encoding (a binary
 * frame, or base64 text frames chunked for API Gateway's limits, shared/domain/live/framing.ts), to a room, and
 * closing connections with the reason said first. Every sender of the service goes through here: the message
 * handler, the REST writes of CRDT data, the migration.
 *
 * Access while connected is access.ts's: a relay reads no access, so its cost stays the same whatever the room's size.
 */
import { randomBytes } from 'node:crypto';
import { ConnectionGoneError, deleteConnection, connectionIsOpen, sendFrame } from '../../adapters/live/management-api';
import { logger } from '../../core/logger';
import { LIVE_METRICS, countLive, countRefusal, type RefusalReason } from '../../core/metrics';
import {
  closeMember,
  deleteTombstones,
  documentConnections,
  isOpen,
  roomMembers,
  type LiveEditorRef,
  type LiveEncoding,
  type RoomMember,
} from '../../db/live-connection';
import { encodeMessages } from './framing';
import { departureOf } from './presence';
import { awarenessMessage, permissionDeniedMessage, updateMessage } from './protocol';

/** At most this many connections per editor (decisions §13); the next is refused with `Room is full.`. */
export const MAX_ROOM_CONNECTIONS = 100;

/** A connection to send to: its id and how it frames messages. */
export interface Recipient {
  connectionId: string;
  encoding: LiveEncoding;
}

const messageId = () => randomBytes(6).toString('base64url');

/**
 * Sends protocol messages to one connection, in order: in binary one frame each; in base64 as few frames as the
 * format allows (a batch for those that fit one frame together). Throws ConnectionGoneError when it is closed.
 */
export async function sendMessages(to: Recipient, messages: readonly Uint8Array[]): Promise<void> {
  if (to.encoding === 'binary') {
    for (const message of messages) await sendFrame(to.connectionId, message);
    return;
  }
  // Chunks of one message go in order; a reader reassembles them whatever else arrives between.
  for (const frame of encodeMessages(messages, messageId)) await sendFrame(to.connectionId, frame);
}

/** Sends one protocol message. Throws ConnectionGoneError when the connection is closed. */
export const sendMessage = (to: Recipient, message: Uint8Array): Promise<void> => sendMessages(to, [message]);

/** Says why in the auth message, then closes the connection. A connection already gone is closed. */
export async function refuse(to: Recipient, reason: string): Promise<void> {
  try {
    await sendMessage(to, permissionDeniedMessage(reason));
  } catch (error) {
    if (!(error instanceof ConnectionGoneError)) throw error;
  }
  await deleteConnection(to.connectionId);
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
export async function removeMember(
  ref: LiveEditorRef,
  member: Recipient,
  reason: string,
  closing: Closing = { revoked: true },
  kind: RefusalReason = 'access',
): Promise<void> {
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
export async function memberClosed(
  ref: LiveEditorRef,
  connectionId: string,
  closing: Closing,
  now = Date.now(),
): Promise<void> {
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
  constructor(
    readonly connectionIds: readonly string[],
    readonly cause: unknown,
  ) {
    super(
      `A live message could not be sent to ${connectionIds.length} connection(s); they were closed so that they resync.`,
    );
  }
}

/**
 * Sends one message to each of `members` side by side (see deliver).
 * @throws RelayFailedError as deliver does.
 */
export async function sendToMembers(
  ref: LiveEditorRef,
  members: readonly RoomMember[],
  message: Uint8Array,
): Promise<void> {
  await deliver(
    ref,
    members.map((member) => ({ member, messages: [message] })),
  );
}

/**
 * What one frame of a client makes the service send to the room, gathered while the frame is handled and sent at
 * its end: one post per member in base64 (decisions §13 "Framing": API Gateway bills every frame), so an edit and its
 * caret move reach each member as one frame, as they came.
 */
export class Outbox {
  private readonly posts = new Map<string, { member: RoomMember; messages: Uint8Array[] }>();

  /** Adds `message` for each of `members`, after what waits for them. */
  add(members: readonly RoomMember[], message: Uint8Array): void {
    for (const member of members) {
      const post = this.posts.get(member.connectionId);
      if (post === undefined) this.posts.set(member.connectionId, { member, messages: [message] });
      else post.messages.push(message);
    }
  }

  /** Sends what waits (see deliver), and empties the outbox. @throws RelayFailedError as deliver does. */
  async send(ref: LiveEditorRef): Promise<void> {
    const posts = [...this.posts.values()];
    this.posts.clear();
    if (posts.length > 0) await deliver(ref, posts);
  }
}

/**
 * Sends each member its messages, members side by side. A member that is gone (API Gateway's GoneException) is
 * closed, never retried, and the others are told its clients left. A member the messages could not reach for any
 * other reason would miss them for good (a client resyncs only when it reconnects), so it is closed and reconnects.
 * @throws RelayFailedError after every member was tried, when such a failure happened (the message counts as failed).
 */
async function deliver(
  ref: LiveEditorRef,
  posts: ReadonlyArray<{ member: RoomMember; messages: readonly Uint8Array[] }>,
): Promise<void> {
  const gone: RoomMember[] = [];
  const failed: RoomMember[] = [];
  let cause: unknown;
  await Promise.all(
    posts.map(async ({ member, messages }) => {
      try {
        await sendMessages(member, messages);
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
  await Promise.all(
    failed.map((member) =>
      deleteConnection(member.connectionId).catch((error: unknown) =>
        logger.error('Live connection not closed.', { error, connectionId: member.connectionId }),
      ),
    ),
  );
  await Promise.all(gone.map((member) => memberClosed(ref, member.connectionId, { revoked: false })));
  if (failed.length > 0)
    throw new RelayFailedError(
      failed.map((member) => member.connectionId),
      cause,
    );
}

/**
 * The members among `suspects` whose connection is still open; the others (entries left by a connection whose
 * `$disconnect` never ran) are closed and the room told their clients left, except the client ids in `kept`. For the
 * rare moments a stale entry matters: a room that looks full, a client id another entry still holds.
 */
export async function openMembers(
  ref: LiveEditorRef,
  suspects: readonly RoomMember[],
  kept?: ReadonlySet<number>,
): Promise<RoomMember[]> {
  const candidates = suspects.filter(isOpen);
  const open = await Promise.all(candidates.map((member) => connectionIsOpen(member.connectionId)));
  await Promise.all(
    candidates
      .filter((_, index) => !open[index])
      .map((member) =>
        memberClosed(ref, member.connectionId, { revoked: false, ...(kept === undefined ? {} : { kept }) }),
      ),
  );
  return candidates.filter((_, index) => open[index]);
}

/** Closes every live connection of a document, saying why (a migration starts: decisions §13). */
export async function closeDocumentConnections(ref: Omit<LiveEditorRef, 'editorId'>, reason: string): Promise<void> {
  const members = await documentConnections(ref);
  await Promise.all(
    members.map((member) =>
      removeMember({ ...ref, editorId: member.editorId }, member, reason, { revoked: true }, 'migration'),
    ),
  );
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
    await sendToMembers(ref, members, updateMessage(update));
  } catch (error) {
    logger.error(
      'An editor change was not sent to its live connections (those it could not reach were closed to resync).',
      { error, editorId: ref.editorId },
    );
  }
}
