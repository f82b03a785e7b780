/**
 * The presence rules of a live room (decisions §13): which awareness entries a connection may change, what is news,
 * what the room is told when a connection's clients leave. No I/O but this process's copy of the room
 * (`knownMember`), so the rules are unit-testable and any step of the message path may use them.
 *
 * A provider (a Yjs client) has one client id; a connection's first presence claims it (socket-events.ts
 * `releaseClaimedClients` settles an id another entry still holds), and it never changes after. The stock provider
 * passes on every presence it learns, so a connection also sends echoes of the others' presence, which are dropped.
 */
import type { ClientPresence, LiveConnection, RoomMember } from '../../db/live-connection';
import { isOpen, knownMember } from '../../db/live-connection';
import type { AwarenessEntry } from './protocol';

/**
 * Whether an awareness message holds only clients that are not the sender's, known without a read: the client ids a
 * connection's first presence claimed never change, so once this process has seen them, presence of any other
 * client from that connection is an echo of what the room sent it (a stock provider without the adapter passes every
 * remote change on), dropped before anything is read (issue 30).
 */
export function isEcho(connection: LiveConnection, entries: readonly AwarenessEntry[]): boolean {
  const self = knownMember(connection, connection.connectionId);
  if (self === undefined || Object.keys(self.presence).length === 0) return false;
  return entries.every((entry) => self.presence[String(entry.clientId)] === undefined);
}

/**
 * The entries of an awareness message that are news about the sender's own clients. A provider passes on every
 * presence it learns (its awareness 'update' handler does not look at the origin), so the room would echo each change
 * once per member; like y-websocket's own server, only a newer clock (or a client leaving at the clock it had) is
 * news. A client id no member has yet is the sender's own when this is its first presence (a provider has one client
 * id); one another member holds, open or closed a moment ago, is that member's to change (an echo of a closed
 * connection's presence never brings it back).
 */
export function ownChanges(
  members: readonly RoomMember[],
  self: RoomMember,
  entries: readonly AwarenessEntry[],
): AwarenessEntry[] {
  const known = new Map<number, ClientPresence & { owner: string }>();
  // Open members last: a client id an open connection holds is its, whatever tombstone also names it.
  for (const member of [...members.filter((member) => !isOpen(member)), ...members.filter(isOpen)]) {
    for (const [clientId, presence] of Object.entries(member.presence))
      known.set(Number(clientId), { ...presence, owner: member.connectionId });
  }
  return entries.filter((entry) => {
    const current = known.get(entry.clientId);
    // Only a first presence claims client ids; an unknown id later is an echo of a client the room just learnt of.
    if (current === undefined) return Object.keys(self.presence).length === 0;
    if (current.owner !== self.connectionId) return false;
    return (
      entry.clock > current.clock ||
      (entry.clock === current.clock && entry.state === 'null' && current.state !== 'null')
    );
  });
}

/** Every known presence of the room's members (clients that said goodbye left out). */
export function presenceOf(members: readonly RoomMember[]): AwarenessEntry[] {
  return members.flatMap((member) =>
    Object.entries(member.presence)
      .filter(([, presence]) => presence.state !== 'null')
      .map(([clientId, presence]) => ({ clientId: Number(clientId), clock: presence.clock, state: presence.state })),
  );
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
