/**
 * The page: a Tiptap editor bound to the service's live document through the stock y-websocket provider
 * (docs/live-sync.md §2). Everything the browser needs comes from this application's server (`GET /session`), which
 * authorized the user with the service; the browser never holds the API key.
 */
import { Editor } from '@tiptap/core';
import Collaboration from '@tiptap/extension-collaboration';
import CollaborationCaret from '@tiptap/extension-collaboration-caret';
import StarterKit from '@tiptap/starter-kit';
import { WebsocketProvider } from 'y-websocket';
import * as Y from 'yjs';
// The repository's adapter, bundled from its one copy; an application of your own copies clients/live-socket.js.
import { createLiveSocket } from '../../../clients/live-socket.js';

const status = document.querySelector('#status');
const showStatus = (state, text) => {
  status.dataset.status = state;
  status.textContent = text;
};

/** Links to this page as each person: two windows, two people. */
async function showPeople(current) {
  const people = await (await fetch('/users')).json();
  document.querySelector('#people').replaceChildren(
    ...people.map((person) => {
      const link = document.createElement('a');
      link.href = `?user=${encodeURIComponent(person.id)}${location.search.includes('adapter=') ? `&adapter=${new URLSearchParams(location.search).get('adapter')}` : ''}`;
      link.textContent = `${person.name} (${person.accessRole})`;
      if (person.id === current) link.setAttribute('aria-current', 'page');
      return link;
    }),
  );
  return people;
}

/** A live session for `userId` from this application's server (server.js), which asks the service. */
async function fetchSession(userId) {
  const response = await fetch(`/session?user=${encodeURIComponent(userId)}`);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error);
  return body;
}

async function main() {
  const query = new URLSearchParams(location.search);
  const userId = query.get('user');
  const people = await showPeople(userId);
  if (userId === null) {
    showStatus(
      'idle',
      `Pick who you are above, then open another window as someone else (${people.map((p) => `?user=${p.id}`).join(', ')}).`,
    );
    return;
  }
  let session = await fetchSession(userId);
  const who = document.querySelector('#who');
  const badge = document.createElement('span');
  badge.className = 'badge';
  badge.style.background = session.user.color;
  badge.textContent = session.user.name;
  who.replaceChildren(
    'You are ',
    badge,
    session.accessRole === 'viewer' ? ': a viewer, you see every change but cannot edit.' : ': an editor.',
  );

  // `&adapter=1` (or `0`) overrides the server's choice: try on the local stack what runs on AWS.
  const adapter = query.has('adapter') ? query.get('adapter') === '1' : session.adapter;
  const ydoc = new Y.Doc();
  const provider = new WebsocketProvider(session.serverUrl, session.room, ydoc, {
    params: { token: session.token },
    // The adapter speaks the base64 framing API Gateway needs; the server turns it on for a wss:// (AWS) serverUrl,
    // or always with LIVE_ADAPTER=always. The local stack serves both.
    WebSocketPolyfill: adapter ? createLiveSocket(WebSocket) : WebSocket,
    // No BroadcastChannel between this browser's tabs: every change goes through the service, which checks each
    // person's access (a viewer's tab must not pass its changes to an editor's tab).
    disableBc: true,
  });

  // Token refresh (docs/live-sync.md, "Refreshing an expired token"). A token only opens connections, and the
  // provider reconnects on its own (a network drop, a restarted server, API Gateway's 2-hour limit): keep a token in
  // provider.params that is good for the next reconnect, renewed before it expires, and checked again when a
  // connection closes (a timer is late after the computer slept).
  let refreshTimer;
  let refreshing = null;
  const refresh = () => {
    refreshing ??= fetchSession(userId)
      .then(
        (fresh) => {
          session = fresh;
          provider.params = { ...provider.params, token: fresh.token };
          scheduleRefresh();
        },
        (error) => {
          // This server or the service is unreachable for now: try again soon, while the token may still be good.
          scheduleRefresh(5_000);
          throw error;
        },
      )
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  };
  const scheduleRefresh = (delay) => {
    clearTimeout(refreshTimer);
    const left = session.expiresAt - Date.now();
    // A minute before the token expires, or halfway there for a short-lived one.
    refreshTimer = setTimeout(() => refresh().catch(() => undefined), delay ?? Math.max(left - 60_000, left / 2, 0));
  };
  scheduleRefresh();
  provider.on('connection-close', () => {
    if (session.expiresAt - Date.now() < 60_000) refresh().catch(() => undefined);
  });
  // The service refused the connection (through the adapter: close code 4403; the provider stops reconnecting).
  // Authorize again: a PERMISSION_DENIED then means this person really lost access.
  provider.on('closed', async ({ reason }) => {
    showStatus('refused', `Refused: ${reason}`);
    try {
      await refresh();
      provider.connect();
    } catch (error) {
      showStatus('refused', `No access: ${error.message}`);
    }
  });
  provider.on('status', ({ status: state }) =>
    showStatus(
      state,
      state === 'connected'
        ? 'Connected'
        : state === 'connecting'
          ? 'Connecting…'
          : 'Offline: your edits are kept and sent when the connection is back.',
    ),
  );

  const editor = new Editor({
    element: document.querySelector('#editor'),
    // A viewer's changes are dropped by the service; the page is read-only too, so nobody types in vain.
    editable: session.accessRole === 'editor',
    extensions: [
      StarterKit.configure({ undoRedo: false }), // Yjs keeps the history (Collaboration's undo and redo).
      Collaboration.configure({ document: ydoc, field: session.field }),
      CollaborationCaret.configure({ provider, user: { name: session.user.name, color: session.user.color } }),
    ],
  });

  // For the browser test and your developer tools.
  window.example = { editor, ydoc, provider, session: () => session };
}

main().catch((error) => {
  console.error(error);
  showStatus('error', `Error: ${error.message}`);
});
