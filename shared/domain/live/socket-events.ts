/**
 * Live sync's three socket events (decisions §13, DESIGN "Live sync"), one function each, as the WebSocket API's
 * handlers (functions/live/) call them: `onConnect` (token and access checked, the connection recorded in its
 * editor's room), `onMessage` for each frame (sync, updates stored before they are relayed, presence, access
 * re-checks), `onDisconnect` (the entry becomes a tombstone, presence removed for everyone).
 *
 * API Gateway cannot send to a connection during its own connect handler, so a connection is always accepted, and
 * a refused one (bad or expired token, no access, a migration, a full room) hears why in the auth message of its
 * first answer and is closed: nothing of the editor is read for it or sent to it. Likewise the server's first sync
 * step goes out with the answer to the client's first message (its sync step 1, which the provider sends on open).
 *
 * Per message: one GetItem (the connection, once per process while it is open), one strongly consistent GetItem (the
 * room's version; its members, which hold this connection's role and last access check, are read again only when it
 * moved, see currentRoom), for an update one guarded write (the delta), for presence one write; what a frame makes the
 * service send goes out at its end, one post per member (Outbox). The reads are the same in a room of 2 or of 100.
 * Sync step 1 reads the editor (state and log) once per connection; nothing rebuilds a document per message.
 */
import * as Y from 'yjs';
import { ConnectionGoneError, deleteConnection } from '../../adapters/live/management-api';
import { config } from '../../core/config';
import { logger } from '../../core/logger';
import { countRefusal, type RefusalReason } from '../../core/metrics';
import {
  appendEditorUpdate,
  editorIncarnation,
  getEditor,
  MAX_DELTA_BYTES,
  updateEditor,
  type EditorRef,
} from '../../db/crdt';
import {
  currentRoom,
  deleteConnectionItem,
  getConnection,
  getOpenConnection,
  isOpen,
  markRoomChanged,
  putConnection,
  putRefusedConnection,
  recordPresence,
  rememberMember,
  roomMembers,
  type ClientPresence,
  type LiveConnection,
  type LiveEditorRef,
  type LiveEncoding,
  type RoomMember,
} from '../../db/live-connection';
import { ChunkCountMismatchError, countChunk, putChunk } from '../../db/live-chunks';
import { LiveTokenError, readLiveToken } from '../../db/live-token';
import { lockedDocuments } from '../../db/migration';
import { assertDocumentsWritable, documentsIn, transactGuarded } from '../document-locks';
import { transactWrite } from '../../db/transact';
import { editorState, mergeUpdate } from '../crdt/yjs-state';
import { TOO_MANY_MESSAGES, takeFrame } from './frame-budget';
import {
  MAX_CLIENT_MESSAGE_BYTES,
  MESSAGE_TOO_LARGE_REASON,
  MalformedFrameError,
  MessageTooLargeError,
  joinChunks,
  parseFrame,
} from './framing';
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
import { MAX_ROOM_CONNECTIONS, memberClosed, openMembers, Outbox, refuse, removeMember, sendMessage } from './room';
import { roomOf } from './sessions';
import { NO_ACCESS, checkOwnAccess, liveRoleOf } from './access';
import { departureOf, isEcho, ownChanges, presenceOf } from './presence';

/** What the WebSocket API hands the connect handler. */
export interface OpenRequest {
  connectionId: string;
  /** The query string: `token`, `encoding` (`binary` or `base64`), and the `room` the client asked for. */
  query: Readonly<Record<string, string | undefined>>;
}

/** One frame: text (base64 encoding) or bytes (binary encoding, local stack only). */
export type Frame = { text: string } | { bytes: Uint8Array };

/** Records the connection, accepted or refused (see the module comment). Never throws for what the client sent. */
export async function onConnect(request: OpenRequest, now = Date.now()): Promise<void> {
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
    return {
      reason:
        "This server carries encoding=base64 only: connect through the service's adapter (clients/live-socket.js) as WebSocketPolyfill.",
      code: 4400,
      kind: 'encoding',
    };
  }
  const token = request.query.token;
  if (token === undefined || token === '')
    return { reason: 'A session token is required (the `token` parameter).', code: 4401, kind: 'token' };
  let session;
  try {
    session = await readLiveToken(token, now);
  } catch (error) {
    if (error instanceof LiveTokenError) return { reason: error.message, code: 4401, kind: 'token' };
    throw error;
  }
  const ref: LiveEditorRef = {
    apiKeyId: session.apiKeyId,
    organizationId: session.organizationId,
    documentId: session.documentId,
    editorId: session.editorId,
  };
  // The token names the editor; a room in the URL that names another is a client mix-up, refused rather than served.
  if (request.query.room !== undefined && request.query.room !== roomOf(ref))
    return { reason: 'The session token is for another room.', code: 4403, kind: 'room' };
  if ((await lockedDocuments(ref.apiKeyId, ref.organizationId, [ref.documentId])).length > 0) {
    return {
      reason: 'The document is being migrated; authorize again when the migration has ended.',
      code: 4403,
      kind: 'migration',
    };
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
  await putConnection(
    { ...ref, connectionId: request.connectionId, userId: session.userId, encoding, incarnation, connectedAt: now },
    role,
    now,
  );
  return { accepted: true };
}

/**
 * Handles one frame of a connection, also one handled after the connection closed (see handleLateMessage). Never
 * throws for what the client sent: a bad frame closes its connection.
 * @throws what storing or reading failed on (the socket handler then closes the connection, so the client resyncs).
 */
export async function onMessage(connectionId: string, frame: Frame, now = Date.now()): Promise<void> {
  const connection = await getOpenConnection(connectionId);
  if (connection === undefined) {
    // Unknown, or its items expired: nothing to serve it from.
    await deleteConnection(connectionId);
    return;
  }
  if ('refused' in connection) {
    await refuse(connection, connection.refused.reason);
    await deleteConnectionItem(connectionId);
    return;
  }
  const budget = takeFrame(connectionId, now);
  if (budget !== 'allowed') {
    // Past its budget: closed once, its later frames dropped (the provider reconnects and resyncs what they held).
    if (budget === 'exceeded') await removeMember(connection, connection, TOO_MANY_MESSAGES, { revoked: true }, 'rate');
    return;
  }
  // What the frame's messages make the service send to the room, one post per member at the end (room.ts Outbox);
  // sent also when a later message of the frame fails, since what it holds of an update is stored already.
  const outbox = new Outbox();
  try {
    let closed = false;
    // In order, as if each had come in a frame of its own (a batch carries several).
    try {
      for (const bytes of await messagesOf(connection, frame, now)) {
        try {
          await handleMessage(connection, bytes, outbox, now);
        } catch (error) {
          if (!(error instanceof ConnectionGoneError && error.connectionId === connectionId)) throw error;
          // Closed while its message was handled: what it sent is handled as a late message would be, when it comes
          // again; the rest of a batch is handled so now (its updates stored and relayed, the rest dropped).
          if (!closed) await memberClosed(connection, connectionId, { revoked: false });
          closed = true;
        }
      }
    } finally {
      await outbox.send(connection);
    }
  } catch (error) {
    if (error instanceof MessageTooLargeError) {
      logger.info('Live connection closed: it sent a message over the limit.', { connectionId });
      await removeMember(connection, connection, MESSAGE_TOO_LARGE_REASON, { revoked: false }, 'too-large');
      return;
    }
    if (!(
      error instanceof MalformedFrameError ||
      error instanceof MalformedMessageError ||
      error instanceof ChunkCountMismatchError
    ))
      throw error;
    logger.info('Live connection closed: it sent a frame that is not a protocol message.', {
      connectionId,
      reason: error.message,
    });
    await removeMember(
      connection,
      connection,
      error instanceof ChunkCountMismatchError ? `Malformed frame: ${error.message}` : error.message,
      { revoked: false },
      'malformed',
    );
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

async function handleMessage(
  connection: LiveConnection,
  bytes: Uint8Array,
  outbox: Outbox,
  now: number,
): Promise<void> {
  const message = readMessage(bytes);
  if (message.kind === 'auth') return;
  if (message.kind === 'awareness' && isEcho(connection, message.entries)) return;
  // Presence is news only against the room as it is now: a presence or sync request reads it afresh when the
  // process's copy may be older than the table (see currentRoom).
  let members = await currentRoom(connection);
  let self = members.find((member) => member.connectionId === connection.connectionId);
  if (self === undefined) {
    // No entry (never admitted, or closed long ago): nothing more for it.
    await deleteConnection(connection.connectionId);
    return;
  }
  if (!isOpen(self)) {
    await handleLateMessage(connection, self, message, members.filter(isOpen), outbox, now);
    return;
  }
  if (!(await checkOwnAccess(connection, self, now))) return;
  const others = members.filter((member) => isOpen(member) && member !== self);
  switch (message.kind) {
    case 'syncStep1':
      await answerSyncStep1(
        connection,
        (await currentRoom(connection, { fresh: true })).filter(isOpen),
        message.stateVector,
      );
      return;
    case 'syncStep2':
    case 'update':
      // A viewer's changes are dropped: never stored, never relayed (decisions §13).
      if (self.role !== 'editor' || isEmptyUpdate(message.update)) return;
      await storeAndRelay(connection, message.update, others, outbox, now);
      return;
    case 'awareness': {
      // A first presence claims its client ids: the room as it is now decides whose they are.
      const claiming = Object.keys(self.presence).length === 0;
      if (claiming) {
        members = await currentRoom(connection, { fresh: true });
        self = members.find((member) => member.connectionId === connection.connectionId);
        if (self === undefined || !isOpen(self)) return;
        await releaseClaimedClients(connection, members, self, message.entries);
      }
      let own = ownChanges(members, self, message.entries);
      if (own.length === 0) return;
      const presenceOfOwn = () =>
        new Map<number, ClientPresence>(
          own.map((entry) => [entry.clientId, { clock: entry.clock, state: entry.state }]),
        );
      // Recorded before it is relayed, and not relayed once the connection has closed: the departure the room is
      // told then carries a clock above every one relayed (memberClosed).
      let recorded = await recordPresence(connection, connection.connectionId, presenceOfOwn());
      if (recorded === 'stale') {
        // This process's copy of the member was older than the table: what is news is decided again from the table.
        members = await currentRoom(connection, { fresh: true });
        self = members.find((member) => member.connectionId === connection.connectionId);
        if (self === undefined || !isOpen(self)) return;
        own = ownChanges(members, self, message.entries);
        if (own.length === 0) return;
        recorded = await recordPresence(connection, connection.connectionId, presenceOfOwn());
      }
      if (recorded !== 'recorded') return;
      for (const entry of own) self.presence[String(entry.clientId)] = { clock: entry.clock, state: entry.state };
      rememberMember(connection, self);
      // Other processes learn the claim before they judge this connection's next presence.
      if (claiming) await markRoomChanged(connection);
      // To the others; to the sender only when it is alone, where nothing else tells the stock provider within its
      // 30 s that the connection lives (with others in the room, their renewals do).
      const open = members.filter((member) => isOpen(member) && member !== self);
      outbox.add(open.length > 0 ? open : [self], awarenessMessage(own));
      return;
    }
    case 'queryAwareness':
      await sendMessage(
        connection,
        awarenessMessage(presenceOf((await currentRoom(connection, { fresh: true })).filter(isOpen))),
      );
      return;
  }
}

/**
 * A message handled after its connection closed (its tab closed right after typing, a send found it gone, or API
 * Gateway ran its `$disconnect` first): its updates are the user's work, stored and relayed to the room as if it
 * were open, unless its access ended (decisions §13). Nothing is sent to it; a presence or sync request closes its
 * socket, in case it is still open, so that its client reconnects rather than wait unsynced.
 */
async function handleLateMessage(
  connection: LiveConnection,
  self: RoomMember,
  message: ReturnType<typeof readMessage>,
  open: readonly RoomMember[],
  outbox: Outbox,
  now: number,
): Promise<void> {
  if (message.kind !== 'update' && message.kind !== 'syncStep2') {
    // A sync request or a presence asks to be served, which a closed entry is not: its socket may still be open (a
    // relay found it gone in the moment between its $connect and API Gateway opening it), and left so the client
    // would wait unsynced. Closed, the provider reconnects and resyncs; a socket already gone is no matter.
    await deleteConnection(connection.connectionId);
    return;
  }
  if (self.role !== 'editor' || self.revoked === true || isEmptyUpdate(message.update)) return;
  await storeAndRelay(connection, message.update, open, outbox, now);
}

/**
 * Stores an update, then puts it in the outbox for `others` (sent at the frame's end).
 * @throws MalformedMessageError when it is not a Yjs update.
 */
async function storeAndRelay(
  connection: LiveConnection,
  update: Uint8Array,
  others: readonly RoomMember[],
  outbox: Outbox,
  now: number,
): Promise<void> {
  checkUpdate(update);
  await storeUpdate(connection, update, now);
  outbox.add(others, updateMessage(update));
}

/**
 * A client id another member still holds, sent by a connection that holds no client yet, is that client's previous
 * connection: the provider reconnects with the same id and first sends its own state. Later messages of a connection
 * are echoes of what it learnt from the room (the stock provider passes every change on), never claims: an echo must
 * not bring a closed client back, nor cost a look-up. A closed holder (a tombstone) lets go at once; an open one only
 * once GetConnection finds it gone (its `$disconnect` never ran), and then its other clients are announced as gone. Released
 * holders are taken out of `members`, so the client's presence counts as this connection's. The room was told at the
 * tombstone's departure clock that the client left (or, for a holder found gone, still has its state at the clock
 * recorded), and ignores its state at that clock or below, so the client is sent its own removal at that clock: a
 * stock client then raises its clock above it and sends its state again (y-protocols answers a remote removal of the
 * local state so), and the room sees it at once. Without this, after a crash a reconnected client resending its
 * unchanged state at the same clock went unseen by stock providers until its next renewal.
 */
async function releaseClaimedClients(
  connection: LiveConnection,
  members: RoomMember[],
  self: RoomMember,
  entries: readonly AwarenessEntry[],
): Promise<void> {
  if (Object.keys(self.presence).length > 0) return;
  const ids = new Set(entries.map((entry) => String(entry.clientId)));
  const holders = members.filter(
    (member) => member !== self && Object.keys(member.presence).some((clientId) => ids.has(clientId)),
  );
  if (holders.length === 0) return;
  const claimed = new Set(entries.map((entry) => entry.clientId));
  const stillOpen = new Set(await openMembers(connection, holders, claimed));
  // The clock at which the room last heard of each claimed client: a tombstone's departure, or the state a holder
  // found gone recorded (the room still shows that state, and ignores it sent again at the same clock).
  const heard = new Map([
    ...holders
      .filter((holder) => isOpen(holder) && !stillOpen.has(holder))
      .flatMap((holder) => Object.entries(holder.presence))
      .map(([clientId, presence]): [number, number] => [Number(clientId), presence.clock]),
    ...holders
      .filter((holder) => !isOpen(holder))
      .flatMap(departureOf)
      .map((entry): [number, number] => [entry.clientId, entry.clock]),
  ]);
  const behind = entries
    .filter((entry) => entry.state !== 'null' && entry.clock <= (heard.get(entry.clientId) ?? -1))
    .map((entry) => ({ clientId: entry.clientId, clock: heard.get(entry.clientId) as number, state: 'null' }));
  for (const holder of holders) if (!stillOpen.has(holder)) members.splice(members.indexOf(holder), 1);
  if (behind.length > 0) await sendMessage(connection, awarenessMessage(behind));
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
async function answerSyncStep1(
  connection: LiveConnection,
  members: readonly RoomMember[],
  stateVector: Uint8Array,
): Promise<void> {
  const editor = await getEditor(connection.apiKeyId, connection);
  if (editor === undefined || editor.incarnation !== connection.incarnation) {
    await removeMember(connection, connection, 'Editor not found.', { revoked: true }, 'editor');
    return;
  }
  const merged =
    editor.deltas.length === 0
      ? editor.state
      : Y.mergeUpdates([editor.state, ...editor.deltas.map((delta) => delta.update)]);
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
 * Stores a live update in the editor's log before anything relays it: one delta item, whose write checks the LOG
 * item a migration locks before it copies the editor (shared/db/crdt.ts lockEditorLogs), or (an update larger than
 * one item holds, the log is full or locked) a fold into the state with the document's migration-lock check.
 */
async function storeUpdate(connection: LiveConnection, update: Uint8Array, now: number): Promise<void> {
  const ref: EditorRef = connection;
  const documents = documentsIn(ref.organizationId, [ref.documentId]);
  const write = (items: Parameters<typeof transactGuarded>[1]) =>
    transactGuarded(connection.apiKeyId, items, documents);
  const lastUpdate = new Date(now).toISOString();
  if (
    update.length <= MAX_DELTA_BYTES &&
    (await appendEditorUpdate(
      connection.apiKeyId,
      ref,
      connection.incarnation,
      { update, lastUpdate, lastUpdatedBy: connection.userId },
      transactWrite,
      now,
    ))
  ) {
    return;
  }
  const stored = await updateEditor(
    connection.apiKeyId,
    ref,
    (current) => ({
      state: mergeUpdate(editorState(current), update, current.type, current.contentKey),
      delta: update,
      lastUpdate,
      lastUpdatedBy: connection.userId,
    }),
    write,
  );
  // No editor at this id (a migration moved it, or it was deleted): refused as the lock check would refuse it.
  if (stored === undefined) await assertDocumentsWritable(connection.apiKeyId, documents);
}

/** A connection closed (`$disconnect`): its entry becomes a tombstone and the room is told its clients left. */
export async function onDisconnect(connectionId: string): Promise<void> {
  const connection = await getConnection(connectionId);
  if (connection === undefined) return;
  if ('refused' in connection) {
    await deleteConnectionItem(connectionId);
    return;
  }
  await memberClosed(connection, connectionId, { revoked: false });
}
