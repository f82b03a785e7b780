/**
 * Live sync's three moments of a connection (decisions §13, DESIGN "Live sync"), as the WebSocket API's handlers
 * call them: open (token and access checked, the connection recorded in its editor's room), each frame (sync,
 * updates stored before they are relayed, presence, access re-checks), close (presence removed for everyone).
 *
 * API Gateway cannot send to a connection during its own connect handler, so a connection is always accepted, and
 * a refused one (bad or expired token, no access, a migration, a full room) hears why in the auth message of its
 * first answer and is closed: nothing of the editor is read for it or sent to it. Likewise the server's first sync
 * step goes out with the answer to the client's first message (its sync step 1, which the provider sends on open).
 *
 * Per message: one GetItem (the connection, once per process while it is open), one strongly consistent Query (the room, which also holds this
 * connection's role and last access check), and for an update one guarded write (the delta) before the relay.
 * Sync step 1 reads the editor (state and log) once per connection; nothing rebuilds a document per message.
 */
import * as Y from 'yjs';
import { ConnectionGoneError, closeConnection } from '../../adapters/live/connections';
import { config } from '../../core/config';
import { logger } from '../../core/logger';
import { countRefusal, type RefusalReason } from '../../core/metrics';
import { appendEditorUpdate, editorIncarnation, getEditor, MAX_DELTA_BYTES, updateEditor, type EditorRef } from '../../db/crdt';
import {
  ChunkCountMismatchError,
  countChunk,
  deleteConnectionItem,
  getConnection,
  getOpenConnection,
  isOpen,
  putChunk,
  putConnection,
  putRefusedConnection,
  recordAccessCheck,
  recordPresence,
  roomMembers,
  type ClientPresence,
  type LiveConnection,
  type LiveEditorRef,
  type LiveEncoding,
  type RoomMember,
} from '../../db/live-connection';
import { LiveTokenError, readLiveToken } from '../../db/live-token';
import { lockedDocuments } from '../../db/migration';
import { documentsIn, transactGuarded } from '../document-locks';
import { editorState, mergeUpdate } from '../crdt/yjs-state';
import { TOO_MANY_MESSAGES, takeFrame } from './frame-budget';
import { MAX_CLIENT_MESSAGE_BYTES, MESSAGE_TOO_LARGE_REASON, MalformedFrameError, MessageTooLargeError, joinChunks, parseFrame } from './framing';
import {
  awarenessMessage,
  isEmptyUpdate,
  MalformedMessageError,
  readMessage,
  syncStep1Message,
  syncStep2Message,
  updateMessage,
  type AwarenessEntry,
} from './protocol';
import { currentMembers, departureOf, liveRoleOf, MAX_ROOM_CONNECTIONS, memberClosed, openMembers, refuse, removeMember, sendMessage, sendToMembers } from './room';
import { roomOf } from './sessions';

/** What the WebSocket API hands the connect handler. */
export interface OpenRequest {
  connectionId: string;
  /** The query string: `token`, `encoding` (`binary` or `base64`), and the `room` the client asked for. */
  query: Readonly<Record<string, string | undefined>>;
}

/** One frame: text (base64 encoding) or bytes (binary encoding, local stack only). */
export type Frame = { text: string } | { bytes: Uint8Array };

const NO_ACCESS = 'User has no access to this document.';

/** Records the connection, accepted or refused (see the module comment). Never throws for what the client sent. */
export async function openConnection(request: OpenRequest, now = Date.now()): Promise<void> {
  const encoding: LiveEncoding = request.query.encoding === 'base64' ? 'base64' : 'binary';
  const refusal = await refusalOf(request, encoding, now);
  if (!('reason' in refusal)) return;
  countRefusal(refusal.kind);
  await putRefusedConnection(request.connectionId, encoding, { reason: refusal.reason, code: refusal.code }, now);
}

/** A refusal: the auth message's reason, the close code, and its class for the live metrics. */
type Admission = { reason: string; code: number; kind: RefusalReason } | { accepted: true };

async function refusalOf(request: OpenRequest, encoding: LiveEncoding, now: number): Promise<Admission> {
  // In AWS (the Management API has an endpoint) API Gateway refuses binary frames: without the adapter the client
  // could never send a thing, so it hears why at once instead of failing on every frame.
  if (encoding !== 'base64' && config.liveConnectionsEndpoint !== undefined) {
    return { reason: 'This server carries encoding=base64 only: connect through the service\'s adapter (clients/live-socket.js) as WebSocketPolyfill.', code: 4400, kind: 'encoding' };
  }
  const token = request.query.token;
  if (token === undefined || token === '') return { reason: 'A session token is required (the `token` parameter).', code: 4401, kind: 'token' };
  let session;
  try {
    session = await readLiveToken(token, now);
  } catch (error) {
    if (error instanceof LiveTokenError) return { reason: error.message, code: 4401, kind: 'token' };
    throw error;
  }
  const ref: LiveEditorRef = { apiKeyId: session.apiKeyId, organizationId: session.organizationId, documentId: session.documentId, editorId: session.editorId };
  // The token names the editor; a room in the URL that names another is a client mix-up, refused rather than served.
  if (request.query.room !== undefined && request.query.room !== roomOf(ref)) return { reason: 'The session token is for another room.', code: 4403, kind: 'room' };
  if ((await lockedDocuments(ref.apiKeyId, ref.organizationId, [ref.documentId])).length > 0) {
    return { reason: 'The document is being migrated; authorize again when the migration has ended.', code: 4403, kind: 'migration' };
  }
  const role = await liveRoleOf(ref, session.userId, now);
  if (role === null) return { reason: NO_ACCESS, code: 4403, kind: 'access' };
  const incarnation = await editorIncarnation(ref.apiKeyId, ref);
  if (incarnation === undefined) return { reason: 'Editor not found.', code: 4403, kind: 'editor' };
  const members = (await roomMembers(ref)).filter(isOpen);
  // A full room is checked for entries whose connection died without its $disconnect before anyone is refused.
  if (members.length >= MAX_ROOM_CONNECTIONS && (await openMembers(ref, members)).length >= MAX_ROOM_CONNECTIONS) {
    return { reason: 'Room is full.', code: 4429, kind: 'room-full' };
  }
  await putConnection({ ...ref, connectionId: request.connectionId, userId: session.userId, encoding, incarnation, connectedAt: now }, role, now);
  return { accepted: true };
}

/**
 * Handles one frame of a connection, also one handled after the connection closed (see handleLateMessage). Never
 * throws for what the client sent: a bad frame closes its connection.
 * @throws what storing or reading failed on (the socket handler then closes the connection, so the client resyncs).
 */
export async function handleFrame(connectionId: string, frame: Frame, now = Date.now()): Promise<void> {
  const connection = await getOpenConnection(connectionId);
  if (connection === undefined) {
    // Unknown, or its items expired: nothing to serve it from.
    await closeConnection(connectionId);
    return;
  }
  if (connection.refused !== undefined) {
    await refuse(connection, connection.refused.reason);
    await deleteConnectionItem(connectionId);
    return;
  }
  const known = connection as LiveConnection;
  const budget = takeFrame(connectionId, now);
  if (budget !== 'allowed') {
    // Past its budget: closed once, its later frames dropped (the provider reconnects and resyncs what they held).
    if (budget === 'exceeded') await removeMember(known, known, TOO_MANY_MESSAGES, { revoked: true }, 'rate');
    return;
  }
  try {
    let closed = false;
    // In order, as if each had come in a frame of its own (a batch carries several).
    for (const bytes of await messagesOf(known, frame, now)) {
      try {
        await handleMessage(known, bytes, now);
      } catch (error) {
        if (!(error instanceof ConnectionGoneError && error.connectionId === connectionId)) throw error;
        // Closed while its message was handled: what it sent is handled as a late message would be, when it comes
        // again; the rest of a batch is handled so now (its updates stored and relayed, the rest dropped).
        if (!closed) await memberClosed(known, connectionId, { revoked: false });
        closed = true;
      }
    }
  } catch (error) {
    if (error instanceof MessageTooLargeError) {
      logger.info('Live connection closed: it sent a message over the limit.', { connectionId });
      await removeMember(known, known, MESSAGE_TOO_LARGE_REASON, { revoked: false }, 'too-large');
      return;
    }
    if (!(error instanceof MalformedFrameError || error instanceof MalformedMessageError || error instanceof ChunkCountMismatchError)) throw error;
    logger.info('Live connection closed: it sent a frame that is not a protocol message.', { connectionId, reason: error.message });
    await removeMember(known, known, error instanceof ChunkCountMismatchError ? `Malformed frame: ${error.message}` : error.message, { revoked: false }, 'malformed');
  }
}

/** The protocol messages a frame completes, in order: none while it is one part of several, several for a batch. */
async function messagesOf(connection: LiveConnection, frame: Frame, now: number): Promise<Uint8Array[]> {
  if ('bytes' in frame) {
    if (frame.bytes.length > MAX_CLIENT_MESSAGE_BYTES) throw new MessageTooLargeError();
    return [frame.bytes];
  }
  const parsed = parseFrame(frame.text);
  if (parsed.kind === 'whole') return [parsed.message];
  if (parsed.kind === 'batch') return parsed.messages;
  await putChunk(connection.connectionId, parsed.id, parsed.index, parsed.part, now);
  const parts = await countChunk(connection.connectionId, parsed.id, parsed.index, parsed.count, now);
  return parts === undefined ? [] : [joinChunks(parts)];
}

async function handleMessage(connection: LiveConnection, bytes: Uint8Array, now: number): Promise<void> {
  const message = readMessage(bytes);
  if (message.kind === 'auth') return;
  const members = await roomMembers(connection);
  const self = members.find((member) => member.connectionId === connection.connectionId);
  if (self === undefined) {
    // No entry (never admitted, or closed long ago): nothing more for it.
    await closeConnection(connection.connectionId);
    return;
  }
  const open = members.filter(isOpen);
  if (!isOpen(self)) {
    await handleLateMessage(connection, self, message, open, now);
    return;
  }
  if (now - self.checkedAt > config.liveAccessCheckMs) {
    const role = await liveRoleOf(connection, connection.userId, now);
    if (role === null) {
      await removeMember(connection, self, NO_ACCESS);
      return;
    }
    self.role = role;
    self.checkedAt = now;
    await recordAccessCheck(connection, connection.connectionId, role, now);
  }
  const others = () => currentMembers(connection, open.filter((member) => member !== self), now);
  switch (message.kind) {
    case 'syncStep1':
      await answerSyncStep1(connection, open, message.stateVector);
      return;
    case 'syncStep2':
    case 'update':
      // A viewer's changes are dropped: never stored, never relayed (decisions §13).
      if (self.role !== 'editor' || isEmptyUpdate(message.update)) return;
      await storeAndRelay(connection, message.update, await others(), now);
      return;
    case 'awareness': {
      await releaseClaimedClients(connection, members, self, message.entries);
      const own = ownChanges(members, self, message.entries);
      if (own.length === 0) return;
      const presence = new Map<number, ClientPresence>(own.map((entry) => [entry.clientId, { clock: entry.clock, state: entry.state }]));
      // Recorded before it is relayed, and not relayed once the connection has closed: the departure the room is
      // told then carries a clock above every one relayed (memberClosed).
      if (!(await recordPresence(connection, connection.connectionId, presence))) return;
      // To everyone, the sender too: the stock provider takes its own presence coming back as a sign of life.
      await sendToMembers(connection, [self, ...(await others())], awarenessMessage(own));
      return;
    }
    case 'queryAwareness':
      await sendMessage(connection, awarenessMessage(presenceOf(open)));
      return;
  }
}

/**
 * A message handled after its connection closed (its tab closed right after typing, a send found it gone, or API
 * Gateway ran its `$disconnect` first): its updates are the user's work, stored and relayed to the room as if it
 * were open, unless its access ended (decisions §13). Nothing is sent to it; presence and sync requests are dropped.
 */
async function handleLateMessage(connection: LiveConnection, self: RoomMember, message: ReturnType<typeof readMessage>, open: readonly RoomMember[], now: number): Promise<void> {
  if (message.kind !== 'update' && message.kind !== 'syncStep2') return;
  if (self.role !== 'editor' || self.revoked === true || isEmptyUpdate(message.update)) return;
  await storeAndRelay(connection, message.update, await currentMembers(connection, open, now), now);
}

/** Stores an update, then relays it to `others`. @throws MalformedMessageError when it is not a Yjs update. */
async function storeAndRelay(connection: LiveConnection, update: Uint8Array, others: readonly RoomMember[], now: number): Promise<void> {
  checkUpdate(update);
  await storeUpdate(connection, update, now);
  await sendToMembers(connection, others, updateMessage(update));
}

/**
 * A client id another member still holds, sent by a connection that holds no client yet, is that client's previous
 * connection: the provider reconnects with the same id and first sends its own state. Later messages of a connection
 * are echoes of what it learnt from the room (the stock provider passes every change on), never claims: an echo must
 * not bring a closed client back, nor cost a look-up. A closed holder (a tombstone) lets go at once; an open one only
 * once GetConnection finds it gone (its `$disconnect` never ran), and then its other clients are announced as gone. Released
 * holders are taken out of `members`, so the client's presence counts as this connection's. The room was told at the
 * tombstone's departure clock that the client left, and ignores its state at that clock or below, so the client is
 * sent its own departure: a stock client then raises its clock above it and sends its state again (y-protocols
 * answers a remote removal of the local state so), and the room sees it at once.
 */
async function releaseClaimedClients(connection: LiveConnection, members: RoomMember[], self: RoomMember, entries: readonly AwarenessEntry[]): Promise<void> {
  if (Object.keys(self.presence).length > 0) return;
  const ids = new Set(entries.map((entry) => String(entry.clientId)));
  const holders = members.filter((member) => member !== self && Object.keys(member.presence).some((clientId) => ids.has(clientId)));
  if (holders.length === 0) return;
  const claimed = new Set(entries.map((entry) => entry.clientId));
  const stillOpen = new Set(await openMembers(connection, holders, claimed));
  const departed = new Map(holders.filter((holder) => !isOpen(holder)).flatMap(departureOf).map((entry) => [entry.clientId, entry.clock]));
  const behind = entries
    .filter((entry) => entry.state !== 'null' && entry.clock <= (departed.get(entry.clientId) ?? -1))
    .map((entry) => ({ clientId: entry.clientId, clock: departed.get(entry.clientId) as number, state: 'null' }));
  for (const holder of holders) if (!stillOpen.has(holder)) members.splice(members.indexOf(holder), 1);
  if (behind.length > 0) await sendMessage(connection, awarenessMessage(behind));
}

/**
 * The entries of an awareness message that are news about the sender's own clients. A provider passes on every
 * presence it learns (its awareness 'update' handler does not look at the origin), so the room would echo each change
 * once per member; like y-websocket's own server, only a newer clock (or a client leaving at the clock it had) is
 * news. A client id no member has yet is the sender's own; one another member holds, open or closed a moment ago,
 * is that member's to change (an echo of a closed connection's presence never brings it back).
 */
function ownChanges(members: readonly RoomMember[], self: RoomMember, entries: readonly AwarenessEntry[]): AwarenessEntry[] {
  const known = new Map<number, ClientPresence & { owner: string }>();
  // Open members last: a client id an open connection holds is its, whatever tombstone also names it.
  for (const member of [...members.filter((member) => !isOpen(member)), ...members.filter(isOpen)]) {
    for (const [clientId, presence] of Object.entries(member.presence)) known.set(Number(clientId), { ...presence, owner: member.connectionId });
  }
  return entries.filter((entry) => {
    const current = known.get(entry.clientId);
    if (current === undefined) return true;
    if (current.owner !== self.connectionId) return false;
    return entry.clock > current.clock || (entry.clock === current.clock && entry.state === 'null' && current.state !== 'null');
  });
}

/** Every known presence of the room's members (clients that said goodbye left out). */
function presenceOf(members: readonly RoomMember[]): AwarenessEntry[] {
  return members.flatMap((member) =>
    Object.entries(member.presence)
      .filter(([, presence]) => presence.state !== 'null')
      .map(([clientId, presence]) => ({ clientId: Number(clientId), clock: presence.clock, state: presence.state })),
  );
}

/** Throws MalformedMessageError when the bytes are not a Yjs update. */
function checkUpdate(update: Uint8Array): void {
  try {
    Y.decodeUpdate(update);
  } catch {
    throw new MalformedMessageError('The update is not a Yjs update.');
  }
}

/**
 * The answer to a client's sync step 1: the step 2 it lacks (the editor's state and log, merged as updates without
 * building a document, diffed against its state vector), the server's own step 1 (so the client sends what the
 * server lacks), and the room's presence.
 */
async function answerSyncStep1(connection: LiveConnection, members: readonly RoomMember[], stateVector: Uint8Array): Promise<void> {
  const editor = await getEditor(connection.apiKeyId, connection);
  if (editor === undefined || editor.incarnation !== connection.incarnation) {
    await removeMember(connection, connection, 'Editor not found.', { revoked: true }, 'editor');
    return;
  }
  const merged = editor.deltas.length === 0 ? editor.state : Y.mergeUpdates([editor.state, ...editor.deltas.map((delta) => delta.update)]);
  let missing: Uint8Array;
  try {
    missing = Y.diffUpdate(merged, stateVector);
  } catch {
    throw new MalformedMessageError('The sync step 1 does not hold a state vector.');
  }
  await sendMessage(connection, syncStep2Message(missing));
  await sendMessage(connection, syncStep1Message(Y.encodeStateVectorFromUpdate(merged)));
  const presence = presenceOf(members.filter((member) => member.connectionId !== connection.connectionId));
  if (presence.length > 0) await sendMessage(connection, awarenessMessage(presence));
}

/**
 * Stores a live update in the editor's log before anything relays it, with the document's migration-lock check in
 * the same write: one delta item, or (an update larger than one item holds, or the log is full) a fold into the state.
 */
async function storeUpdate(connection: LiveConnection, update: Uint8Array, now: number): Promise<void> {
  const ref: EditorRef = connection;
  const write = (items: Parameters<typeof transactGuarded>[1]) => transactGuarded(connection.apiKeyId, items, documentsIn(ref.organizationId, [ref.documentId]));
  const lastUpdate = new Date(now).toISOString();
  if (update.length <= MAX_DELTA_BYTES && (await appendEditorUpdate(connection.apiKeyId, ref, connection.incarnation, { update, lastUpdate, lastUpdatedBy: connection.userId }, write, now))) {
    return;
  }
  await updateEditor(
    connection.apiKeyId,
    ref,
    (current) => ({ state: mergeUpdate(editorState(current), update, current.type, current.contentKey), delta: update, lastUpdate, lastUpdatedBy: connection.userId }),
    write,
  );
}

/** A connection closed (`$disconnect`): its entry becomes a tombstone and the room is told its clients left. */
export async function closedConnection(connectionId: string): Promise<void> {
  const connection = await getConnection(connectionId);
  if (connection === undefined) return;
  if (connection.refused !== undefined) {
    await deleteConnectionItem(connectionId);
    return;
  }
  await memberClosed(connection as LiveConnection, connectionId, { revoked: false });
}
