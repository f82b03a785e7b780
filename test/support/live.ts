/**
 * Live sync in the e2e tier: a document with users over HTTP, sessions from `/v2/crdt/live/authorize`, and clients —
 * the stock `WebsocketProvider` of `y-websocket` over the `ws` package (Node 20 has no WebSocket), or a raw socket
 * that reads the protocol's messages itself.
 */
import * as decoding from 'lib0/decoding';
import WebSocket from 'ws';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
import { post } from './http';
import { uniqueId } from './ids';
import { waitFor } from './wait';

export interface LiveDoc {
  headers: Record<string, string>;
  organizationId: string;
  documentId: string;
  editorId: string;
}

/** A new organization with users `ann` and `bob` (editors) and `vic` (viewer), and a document with a text editor. */
export async function seedLiveDocument(headers: Record<string, string>): Promise<LiveDoc> {
  const organizationId = uniqueId('org');
  const documentId = uniqueId('doc');
  const users = await post(
    '/v2/users/add',
    {
      organizationId,
      createOrganization: true,
      users: [
        { userId: 'ann', name: 'Ann', email: 'ann@example.com', accessRole: 'editor' },
        { userId: 'bob', name: 'Bob', email: 'bob@example.com', accessRole: 'editor' },
        { userId: 'vic', name: 'Vic', email: 'vic@example.com', accessRole: 'viewer' },
      ],
    },
    headers,
  );
  if (users.status !== 200) throw new Error(`users/add: ${JSON.stringify(users.body)}`);
  const documents = await post(
    '/v2/organizations/documents/add',
    { organizationId, documents: [{ documentId, documentName: 'Live' }] },
    headers,
  );
  if (documents.status !== 200) throw new Error(`documents/add: ${JSON.stringify(documents.body)}`);
  const doc = { headers, organizationId, documentId, editorId: 'body' };
  await authorize(doc, 'ann', { type: 'text' });
  return doc;
}

export interface Session {
  token: string;
  serverUrl: string;
  room: string;
  accessRole: 'editor' | 'viewer';
  expiresAt: number;
}

export async function authorize(doc: LiveDoc, userId: string, extra: Record<string, unknown> = {}): Promise<Session> {
  const reply = await post(
    '/v2/crdt/live/authorize',
    { organizationId: doc.organizationId, documentId: doc.documentId, editorId: doc.editorId, userId, ...extra },
    doc.headers,
  );
  if (reply.status !== 200) throw new Error(`authorize: ${JSON.stringify(reply.body)}`);
  return reply.body.result.data as Session;
}

export interface LiveClient {
  doc: Y.Doc;
  provider: WebsocketProvider;
  text(): string;
}

const clients: LiveClient[] = [];

/** A stock provider on the session, synced. Destroyed by `closeClients`. */
export async function connect(
  session: Session,
  options: { WebSocketPolyfill?: unknown; params?: Record<string, string> } = {},
): Promise<LiveClient> {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(session.serverUrl, session.room, doc, {
    params: { token: session.token, ...options.params },
    WebSocketPolyfill: (options.WebSocketPolyfill ?? WebSocket) as typeof globalThis.WebSocket,
    disableBc: true,
  });
  const client = { doc, provider, text: () => doc.getText('content').toString() };
  clients.push(client);
  await waitFor(() => provider.synced, { what: 'the provider to sync' });
  return client;
}

export function closeClients(): void {
  for (const client of clients.splice(0)) {
    client.provider.destroy();
    // The provider leaves its awareness's timer running (y-protocols clears it only in destroy).
    client.provider.awareness.destroy();
    client.doc.destroy();
  }
  for (const raw of sockets.splice(0)) raw.socket.terminate();
}

const sockets: RawSocket[] = [];

/** What a raw socket receives: protocol messages (type and, for auth, the reason), and how it closed. */
export interface RawSocket {
  socket: WebSocket;
  messages: Array<{ type: number; reason?: string; bytes: Uint8Array }>;
  closed?: { code: number; reason: string };
  opened: Promise<void>;
}

/** A raw binary-encoding socket on `url` (the session's URL unless given). */
export function rawSocket(url: string): RawSocket {
  const socket = new WebSocket(url);
  const raw: RawSocket = {
    socket,
    messages: [],
    opened: new Promise((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    }),
  };
  socket.on('message', (data: Buffer) => {
    const bytes = new Uint8Array(data);
    const decoder = decoding.createDecoder(bytes);
    const type = decoding.readVarUint(decoder);
    const reason = type === 2 ? (decoding.readVarUint(decoder), decoding.readVarString(decoder)) : undefined;
    raw.messages.push({ type, ...(reason === undefined ? {} : { reason }), bytes });
  });
  socket.on('close', (code: number, reason: Buffer) => {
    raw.closed = { code, reason: reason.toString('utf8') };
  });
  socket.on('error', () => undefined);
  sockets.push(raw);
  return raw;
}

export const sessionUrl = (session: Session, token = session.token, room = session.room) =>
  `${session.serverUrl}/${room}?token=${encodeURIComponent(token)}`;

/** The y-protocols sync step 1 of an empty document: what a client sends first. */
export const EMPTY_SYNC_STEP_1 = new Uint8Array([0, 0, 1, 0]);
