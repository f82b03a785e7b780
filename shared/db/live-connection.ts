/**
 * Live-sync connections (decisions §13, DESIGN "Live sync"). Each WebSocket is two items, written when it opens, both
 * with a TTL past API Gateway's 2-hour connection limit so that a connection whose disconnect never ran cannot
 * linger. When it closes, its room entry becomes a tombstone for TOMBSTONE_MS (what it sent is still stored, echoes
 * of its presence are still known as its), then both are deleted:
 *
 *   pk LIVECONN#<connection>              sk CONNECTION        who and what: tenant, organization, document, editor,
 *                                                              user, encoding, the editor's incarnation; or the
 *                                                              reason it is refused (answered on its first message)
 *   pk T#<key>#ORG#<org>#LIVE#<doc>       sk C#<editor>#<conn> its place in the editor's room: user, role, encoding,
 *                                                              when its access was last checked, its clients'
 *                                                              presence (awareness clock and state per client id);
 *                                                              once closed: when, and whether its access ended
 *   pk T#<key>#ORG#<org>#LIVE#<doc>       sk I#<editor>#<conn> its entries in the two revocation indexes (below), an
 *                                                              item of its own so that presence writes, many per
 *                                                              minute, update no index (1 write unit, not 3)
 *   pk T#<key>#ORG#<org>#LIVE#<doc>       sk R#<editor>        the room's version: one more at every join, close and
 *                                                              change of a member's role
 *
 * A message names only its connection, so the connection item is read first (GetItem, then kept per process). The
 * room's members are read through `currentRoom`: one strongly consistent GetItem of the room's version, and the
 * members (one strongly consistent Query of the editor's prefix; a GSI read could miss a client that has just
 * joined) only when the version moved since this process last read them. The parts of a message that came in
 * several frames are stored beside the connection item (shared/db/live-chunks.ts). A frame's reads are so constant in the
 * room's size (issue 30). One partition per document holds every editor's room, so closing a document's connections
 * (a migration) is one Query too.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, type Item } from './batch';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, prefix, segment, sortableNumber } from './keys';
import { organizationPartition } from './organization';
import { queryAll } from './query';
import { TTL_ATTRIBUTE } from './table-definition';
import type { Role } from './membership';

/** API Gateway closes a connection after 2 hours; its items outlive that by an hour, then expire. */
const CONNECTION_TTL_SECONDS = 3 * 60 * 60;
/** A refused connection is answered on its first message, within seconds of opening, or never. */
const REFUSED_TTL_SECONDS = 10 * 60;

export type LiveEncoding = 'binary' | 'base64';

export interface LiveEditorRef {
  apiKeyId: string;
  organizationId: string;
  documentId: string;
  editorId: string;
}

/** A connection as its items hold it. */
export interface LiveConnection extends LiveEditorRef {
  connectionId: string;
  userId: string;
  encoding: LiveEncoding;
  /** The editor's incarnation when the connection opened (its live edits are stamped with it). */
  incarnation: string;
  connectedAt: number;
}

/** A connection that was refused: the reason is said in the auth message of its first answer, then it is closed. */
export interface RefusedConnection {
  connectionId: string;
  encoding: LiveEncoding;
  refused: { reason: string; code: number };
}

/** A connection's item: accepted, or refused (tell them apart with `'refused' in connection`). */
export type StoredConnection = LiveConnection | RefusedConnection;

/** Presence of one client (a Yjs client id) of a connection: the newest clock seen and its state (JSON, or null). */
export interface ClientPresence {
  clock: number;
  state: string;
}

/** A connection's place in its editor's room. */
export interface RoomMember {
  connectionId: string;
  /** The editor whose room it is in. */
  editorId: string;
  userId: string;
  role: Role;
  encoding: LiveEncoding;
  /** When the user's access was last resolved (ms). */
  checkedAt: number;
  /** Its clients' presence, by client id. */
  presence: Record<string, ClientPresence>;
  /**
   * Set once the connection has closed (its $disconnect ran, a send found it gone, or the service closed it): the
   * entry stays a while as a tombstone, so that messages of the connection handled after its close are still stored
   * (API Gateway does not order `$disconnect` after `$default`) and echoes of its clients' presence are known as
   * theirs (decisions §13 "Nothing lost, nothing stale").
   */
  closedAt?: number;
  /** Closed because its access ended (or its document moves): its late messages are dropped, not stored. */
  revoked?: boolean;
}

/** How long a closed connection's room entry is kept as a tombstone (see RoomMember.closedAt). */
export const TOMBSTONE_MS = 2 * 60 * 1000;

/** Whether a member's connection is open (not a tombstone). */
export const isOpen = (member: RoomMember): boolean => member.closedAt === undefined;

const connectionKey = (connectionId: string) => ({ pk: key('LIVECONN', segment(connectionId)), sk: 'CONNECTION' });
const roomPartition = (ref: Omit<LiveEditorRef, 'editorId'>) =>
  key(organizationPartition(ref.apiKeyId, ref.organizationId), 'LIVE', segment(ref.documentId));
const memberKey = (ref: LiveEditorRef, connectionId: string) => ({
  pk: roomPartition(ref),
  sk: key('C', segment(ref.editorId), segment(connectionId)),
});
/** A connection's room entry key (tests seed its state directly). */
export const memberKeyOf = (apiKeyId: string, ref: Omit<LiveEditorRef, 'apiKeyId'>, connectionId: string) =>
  memberKey({ apiKeyId, ...ref }, connectionId);
const indexKey = (ref: LiveEditorRef, connectionId: string) => ({
  pk: roomPartition(ref),
  sk: key('I', segment(ref.editorId), segment(connectionId)),
});
const roomKey = (ref: LiveEditorRef) => ({ pk: roomPartition(ref), sk: key('R', segment(ref.editorId)) });
const ttl = (now: number, seconds: number) => Math.floor(now / 1000) + seconds;

function toConnection(item: Item): LiveConnection {
  return {
    connectionId: String(item.connectionId),
    apiKeyId: String(item.apiKeyId),
    organizationId: String(item.organizationId),
    documentId: String(item.documentId),
    editorId: String(item.editorId),
    userId: String(item.userId),
    encoding: item.encoding === 'base64' ? 'base64' : 'binary',
    incarnation: String(item.incarnation ?? ''),
    connectedAt: Number(item.connectedAt),
  };
}

function toMember(item: Item): RoomMember {
  const presence: Record<string, ClientPresence> = {};
  for (const [clientId, value] of Object.entries(
    (item.presence ?? {}) as Record<string, { clock?: unknown; state?: unknown }>,
  )) {
    presence[clientId] = { clock: Number(value.clock), state: String(value.state) };
  }
  return {
    connectionId: String(item.connectionId),
    editorId: String(item.editorId),
    userId: String(item.userId),
    role: item.role === 'editor' ? 'editor' : 'viewer',
    encoding: item.encoding === 'base64' ? 'base64' : 'binary',
    checkedAt: Number(item.checkedAt),
    presence,
    ...(typeof item.closedAt === 'number' ? { closedAt: item.closedAt, revoked: item.revoked === true } : {}),
  };
}

/**
 * Records an accepted connection: its item and its room entry, one write each (a connection that fails between
 * them is refused on its first message, having no room entry to be relayed through).
 */
export async function putConnection(connection: LiveConnection, role: Role, now = Date.now()): Promise<void> {
  const expiry = { [TTL_ATTRIBUTE]: ttl(now, CONNECTION_TTL_SECONDS) };
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: { ...connectionKey(connection.connectionId), ...connection, ...expiry },
    }),
  );
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: {
        ...memberKey(connection, connection.connectionId),
        connectionId: connection.connectionId,
        editorId: connection.editorId,
        userId: connection.userId,
        role,
        encoding: connection.encoding,
        checkedAt: now,
        presence: {},
        ...expiry,
      },
    }),
  );
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: { ...indexKey(connection, connection.connectionId), ...indexItemOf(connection, role, now), ...expiry },
    }),
  );
  // Last: a frame that reads the new version finds the entry.
  await markRoomChanged(connection);
}

/** Records a refused connection: only what its first answer needs (nothing of the editor is read for it). */
export async function putRefusedConnection(
  connectionId: string,
  encoding: LiveEncoding,
  refused: { reason: string; code: number },
  now = Date.now(),
): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: {
        ...connectionKey(connectionId),
        connectionId,
        encoding,
        refusedReason: refused.reason,
        refusedCode: refused.code,
        connectedAt: now,
        [TTL_ATTRIBUTE]: ttl(now, REFUSED_TTL_SECONDS),
      },
    }),
  );
}

/**
 * Connections read by this process, by id: a connection's item never changes, and each of its frames starts by
 * reading it (also a frame handled after the connection closed: its identity is what stores its last updates). A
 * process keeps at most CACHED_CONNECTIONS, the newest; an entry is dropped when this process deletes the item. Whether
 * the connection is still open is never taken from here: the message path reads its room entry.
 */
const CACHED_CONNECTIONS = 10_000;
const openConnections = new Map<string, LiveConnection>();

/** The connection, read once per process while it is open (see openConnections); undefined when it is unknown. */
export async function getOpenConnection(connectionId: string): Promise<StoredConnection | undefined> {
  const cached = openConnections.get(connectionId);
  if (cached !== undefined) return cached;
  const connection = await getConnection(connectionId);
  if (connection !== undefined && !('refused' in connection)) {
    if (openConnections.size >= CACHED_CONNECTIONS)
      openConnections.delete(openConnections.keys().next().value as string);
    openConnections.set(connectionId, connection);
  }
  return connection;
}

/** The connection, or undefined when it is unknown (closed, or expired). */
export async function getConnection(connectionId: string): Promise<StoredConnection | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: connectionKey(connectionId), ConsistentRead: true }),
  );
  if (Item === undefined) return undefined;
  if (typeof Item.refusedReason === 'string') {
    return {
      connectionId,
      encoding: Item.encoding === 'base64' ? 'base64' : 'binary',
      refused: { reason: Item.refusedReason, code: Number(Item.refusedCode) },
    };
  }
  return toConnection(Item);
}

/**
 * Every member of the editor's room, open or closed a moment ago (tombstones: see RoomMember.closedAt), read
 * strongly consistent (one Query: at most MAX_ROOM_CONNECTIONS open entries and the tombstones of the last minutes).
 */
export async function roomMembers(ref: LiveEditorRef): Promise<RoomMember[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :editor)',
    ExpressionAttributeValues: { ':pk': roomPartition(ref), ':editor': prefix('C', segment(ref.editorId)) },
    ConsistentRead: true,
  });
  return items.map(toMember);
}

/** Every open connection of a document, whatever the editor (a migration closes them all); tombstones left out. */
export async function documentConnections(ref: Omit<LiveEditorRef, 'editorId'>): Promise<RoomMember[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :members)',
    ExpressionAttributeValues: { ':pk': roomPartition(ref), ':members': prefix('C') },
    ConsistentRead: true,
  });
  return items.map(toMember).filter(isOpen);
}

/**
 * Marks a connection's room entry closed (a tombstone, see RoomMember.closedAt), keeping its role and presence.
 * Returns the entry as it was closed to the one caller that closed it (that caller tells the room its clients left);
 * undefined when it was closed already or has no entry. The connection item stays until its TTL: a late message of
 * the connection is read through it.
 */
export async function closeMember(
  ref: LiveEditorRef,
  connectionId: string,
  options: { revoked: boolean },
  now = Date.now(),
): Promise<RoomMember | undefined> {
  const closed = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: memberKey(ref, connectionId),
        UpdateExpression: 'SET closedAt = :now, revoked = :revoked, #ttl = :ttl',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(closedAt)',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': now, ':revoked': options.revoked, ':ttl': ttl(now + TOMBSTONE_MS, 0) },
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  // Out of the revocation indexes too (a closed connection has no access to lose); when it was closed already, its
  // index item too, should the closer have stopped between the two writes.
  await db.send(new DeleteCommand({ TableName: TABLE_NAME, Key: indexKey(ref, connectionId) }));
  if (closed === undefined) return undefined;
  // The room's version moves.
  await markRoomChanged(ref);
  return closed.Attributes === undefined ? undefined : toMember(closed.Attributes);
}

/** Removes the items of connections closed longer than TOMBSTONE_MS ago (their entries and connection items). */
export async function deleteTombstones(
  ref: LiveEditorRef,
  members: readonly RoomMember[],
  now = Date.now(),
): Promise<void> {
  const old = members.filter((member) => member.closedAt !== undefined && now - member.closedAt > TOMBSTONE_MS);
  if (old.length === 0) return;
  for (const member of old) openConnections.delete(member.connectionId);
  await batchWrite(
    old
      .flatMap((member) => [
        connectionKey(member.connectionId),
        memberKey(ref, member.connectionId),
        indexKey(ref, member.connectionId),
      ])
      .map((itemKey) => ({ DeleteRequest: { Key: itemKey } })),
  );
}

/** Removes a refused connection's item (it has no room entry). */
export async function deleteConnectionItem(connectionId: string): Promise<void> {
  openConnections.delete(connectionId);
  await db.send(new DeleteCommand({ TableName: TABLE_NAME, Key: connectionKey(connectionId) }));
}

/**
 * Records a fresh access check of a member: its role now and when. Conditional on the entry existing, so a check
 * racing the connection's close does not bring the entry back. Returns false when it is gone. A changed role moves
 * the room's version (the message path drops a viewer's updates by the role it holds).
 */
export async function recordAccessCheck(
  ref: LiveEditorRef,
  connectionId: string,
  role: Role,
  now = Date.now(),
): Promise<boolean> {
  const checked = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: memberKey(ref, connectionId),
        UpdateExpression: 'SET #role = :role, checkedAt = :now',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(closedAt)',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: { ':role': role, ':now': now },
        ReturnValues: 'UPDATED_OLD',
      }),
    ),
  );
  if (checked === undefined) return false;
  if (checked.Attributes?.role !== role) {
    await markRoomChanged(ref);
    await updateIndexedRole(ref, connectionId, role);
  }
  return true;
}

/** Keeps the role on the connection's index item with the room entry's (revocation reads it there). */
async function updateIndexedRole(ref: LiveEditorRef, connectionId: string, role: Role): Promise<void> {
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: indexKey(ref, connectionId),
        UpdateExpression: 'SET #role = :role',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: { ':role': role },
      }),
    ),
  );
}

/** What recording presence found: recorded; the connection closed; or a clock recorded already as high (a stale read). */
export type PresenceRecord = 'recorded' | 'closed' | 'stale';

/**
 * Records the newest presence of some of a member's clients (one UpdateItem, whatever their number; a state of
 * `null` is kept too), conditional on the connection being open and on each clock being above the one recorded (or
 * equal, for a goodbye of a client whose state was recorded): a room read a moment ago may hold an older presence of
 * the member than the table (another function instance handled its last message), and the recorded clock must stay
 * the highest relayed. 'closed' means the presence must not be relayed (the room was, or is being, told its clients
 * left at a clock above the recorded one); 'stale', that the caller's view of the member was old.
 */
export async function recordPresence(
  ref: LiveEditorRef,
  connectionId: string,
  clients: ReadonlyMap<number, ClientPresence>,
): Promise<PresenceRecord> {
  if (clients.size === 0) return 'recorded';
  const names: Record<string, string> = { '#presence': 'presence', '#clock': 'clock' };
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const newer: string[] = [];
  let index = 0;
  for (const [clientId, presence] of clients) {
    const path = `#presence.#c${index}`;
    names[`#c${index}`] = String(clientId);
    values[`:c${index}`] = presence;
    values[`:k${index}`] = presence.clock;
    sets.push(`${path} = :c${index}`);
    let goodbye = '';
    if (presence.state === 'null') {
      names['#state'] = 'state';
      values[':null'] = 'null';
      goodbye = ` OR (${path}.#clock = :k${index} AND ${path}.#state <> :null)`;
    }
    newer.push(`(attribute_not_exists(${path}) OR ${path}.#clock < :k${index}${goodbye})`);
    index += 1;
  }
  const recorded = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: memberKey(ref, connectionId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: ['attribute_exists(pk) AND attribute_not_exists(closedAt)', ...newer].join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    ),
  );
  if (recorded !== undefined) return 'recorded';
  // Rare: which condition failed.
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: memberKey(ref, connectionId), ConsistentRead: true }),
  );
  return Item === undefined || Item.closedAt !== undefined ? 'closed' : 'stale';
}

/**
 * Moves the room's version on (a join, a close, a changed role, a connection's first presence claiming its client
 * ids): a process that read the room at an older version reads its members again before it next relays (see
 * currentRoom).
 */
export async function markRoomChanged(ref: LiveEditorRef): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: roomKey(ref),
      UpdateExpression: 'ADD #version :one SET #ttl = :ttl',
      ExpressionAttributeNames: { '#version': 'version', '#ttl': TTL_ATTRIBUTE },
      // Past the last connection's items: a room without connections for that long starts again at a new version.
      ExpressionAttributeValues: { ':one': 1, ':ttl': ttl(Date.now(), CONNECTION_TTL_SECONDS) },
    }),
  );
}

/** Rooms read by this process, by room: the version they were read at and their members. */
const CACHED_ROOMS = 1_000;
const rooms = new Map<string, { version: number; members: RoomMember[] }>();
const roomCacheKey = (ref: LiveEditorRef) =>
  JSON.stringify([ref.apiKeyId, ref.organizationId, ref.documentId, ref.editorId]);

/**
 * The editor's room as it is now, for the message path: its members read at the room's current version (one
 * strongly consistent GetItem of the version; the members' Query only when the version moved since this process
 * last read them, or when `fresh`). Joins, closes and role changes move the version; presence and access-check times
 * do not, so a member's presence and `checkedAt` may be older than the table's (recordPresence guards the clocks).
 * The members are copies: the caller may change them.
 */
export async function currentRoom(ref: LiveEditorRef, options: { fresh?: boolean } = {}): Promise<RoomMember[]> {
  const cacheKey = roomCacheKey(ref);
  const { Item } = await db.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: roomKey(ref),
      ConsistentRead: true,
      ProjectionExpression: '#version',
      ExpressionAttributeNames: { '#version': 'version' },
    }),
  );
  const version = Number(Item?.version ?? 0);
  const cached = rooms.get(cacheKey);
  if (options.fresh !== true && cached !== undefined && cached.version === version)
    return cached.members.map(copyMember);
  const members = await roomMembers(ref);
  rooms.delete(cacheKey);
  if (rooms.size >= CACHED_ROOMS) rooms.delete(rooms.keys().next().value as string);
  rooms.set(cacheKey, { version, members: members.map(copyMember) });
  return members;
}

/**
 * The member as this process last read it in its room, without reading the table (undefined when it has not read
 * it): for what never changes once set, like the client ids a connection's first presence claimed.
 */
export function knownMember(ref: LiveEditorRef, connectionId: string): RoomMember | undefined {
  const member = rooms.get(roomCacheKey(ref))?.members.find((entry) => entry.connectionId === connectionId);
  return member === undefined ? undefined : copyMember(member);
}

/** Keeps what this process learnt of a member (its presence recorded, its access checked) in the room it read. */
export function rememberMember(ref: LiveEditorRef, member: RoomMember): void {
  const cached = rooms.get(roomCacheKey(ref));
  if (cached === undefined) return;
  const at = cached.members.findIndex((entry) => entry.connectionId === member.connectionId);
  if (at >= 0) cached.members[at] = copyMember(member);
}

const copyMember = (member: RoomMember): RoomMember => ({
  ...member,
  presence: Object.fromEntries(
    Object.entries(member.presence).map(([clientId, presence]) => [clientId, { ...presence }]),
  ),
});

/**
 * Revocation (decisions §13 "Nothing lost, nothing stale"; shared/domain/live/revocation.ts). A REST change that
 * takes access away must reach the open connections it concerns without a Scan, and so must the 60-s backstop for
 * silent connections, so the room entry joins two indexes, written with it and left when it closes (a tombstone
 * keeps no index keys):
 *
 *   gsi1 T#<key>#ORG#<org>#LIVEUSER#<user>  /  <doc>#<editor>#<conn>     a user's open connections in an organization
 *   gsi2 LIVECHECK#<shard>                  /  <checked at, ms>#<conn>   connections by their last backstop check
 *
 * The check index spans tenants (the backstop serves the whole stage, as connection items do) and is sharded by
 * connection (ACCESS_CHECK_SHARDS partitions, each moved once a check interval per connection): a Query of a shard up
 * to a time reads only the connections due. Its sort key is when the backstop (or the connection's opening) last
 * checked; a check by the connection's own messages moves `checkedAt` only, so such an entry comes up due early and
 * is then just moved on (`scheduleAccessCheck`). Index reads are eventually consistent: a connection opened a moment
 * ago may be missed by one pass, and the next finds it; one closed a moment ago is found and harmlessly skipped.
 */
export const ACCESS_CHECK_SHARDS = 8;

/** A room entry found through an index: the member and the editor whose room it is in. */
export interface IndexedMember {
  ref: LiveEditorRef;
  member: RoomMember;
}

const userConnectionsPartition = (apiKeyId: string, organizationId: string, userId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'LIVEUSER', segment(userId));
const accessCheckPartition = (shard: number) => key('LIVECHECK', String(shard));
const accessCheckSortKey = (checkedAt: number, connectionId: string) =>
  key(sortableNumber(Math.max(0, Math.floor(checkedAt))), segment(connectionId));

/** The shard of a connection in the check index: a stable spread of its id. */
function accessCheckShard(connectionId: string): number {
  let hash = 0;
  for (const char of connectionId) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % ACCESS_CHECK_SHARDS;
}

/** A connection's item in the revocation indexes (written by putConnection, deleted when it closes). */
function indexItemOf(
  connection: LiveEditorRef & { connectionId: string; userId: string; encoding: LiveEncoding },
  role: Role,
  now: number,
): Item {
  return {
    apiKeyId: connection.apiKeyId,
    organizationId: connection.organizationId,
    documentId: connection.documentId,
    editorId: connection.editorId,
    connectionId: connection.connectionId,
    userId: connection.userId,
    role,
    encoding: connection.encoding,
    checkedAt: now,
    gsi1pk: userConnectionsPartition(connection.apiKeyId, connection.organizationId, connection.userId),
    gsi1sk: key(segment(connection.documentId), segment(connection.editorId), segment(connection.connectionId)),
    gsi2pk: accessCheckPartition(accessCheckShard(connection.connectionId)),
    gsi2sk: accessCheckSortKey(now, connection.connectionId),
  };
}

function toIndexedMember(item: Item): IndexedMember {
  const member = toMember(item);
  return {
    ref: {
      apiKeyId: String(item.apiKeyId),
      organizationId: String(item.organizationId),
      documentId: String(item.documentId),
      editorId: member.editorId,
    },
    member,
  };
}

/** Every open connection of a user in an organization, whatever the document (one gsi1 Query). */
export async function userConnections(
  apiKeyId: string,
  organizationId: string,
  userId: string,
): Promise<IndexedMember[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': userConnectionsPartition(apiKeyId, organizationId, userId) },
  });
  // An index read may still hold a connection closed a moment ago.
  return items.map(toIndexedMember).filter(({ member }) => isOpen(member));
}

/** The connections of one shard whose last backstop check is before `before` (ms), oldest first (one gsi2 Query). */
export async function connectionsDueForCheck(shard: number, before: number, max = Infinity): Promise<IndexedMember[]> {
  const items = await queryAll(
    {
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :before',
      ExpressionAttributeValues: {
        ':pk': accessCheckPartition(shard),
        ':before': key(sortableNumber(Math.max(0, Math.floor(before)))),
      },
    },
    max,
  );
  return items.map(toIndexedMember).filter(({ member }) => isOpen(member));
}

/**
 * Moves a connection's entry in the check index to `checkedAt` (its access was checked then). Conditional on the
 * index item existing (it is deleted when the connection closes), so a check racing the close does not bring it
 * back; false when it is gone.
 */
export async function scheduleAccessCheck(
  ref: LiveEditorRef,
  connectionId: string,
  checkedAt: number,
): Promise<boolean> {
  const written = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: indexKey(ref, connectionId),
        UpdateExpression: 'SET gsi2sk = :sk, checkedAt = :checked',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':sk': accessCheckSortKey(checkedAt, connectionId), ':checked': checkedAt },
      }),
    ),
  );
  return written !== undefined;
}
