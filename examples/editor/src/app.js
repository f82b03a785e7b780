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
import { CommentHighlights, commentPanel } from './comments.js';

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

/** A call to this application's server (server.js), which calls the service with its API key. */
async function api(method, path, userId, body) {
  const response = await fetch(`${path}?user=${encodeURIComponent(userId)}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error);
  return answer;
}

/** An element with its text and attributes, for the lists below. */
const element = (tag, text, attributes = {}) =>
  Object.assign(document.createElement(tag), text === undefined ? {} : { textContent: text }, attributes);

/**
 * The version list beside the editor (decisions §14): name, time and authors of each version, newest first; "Save
 * version" keeps the document as the service holds it now, and "Restore" makes the document that version's again.
 * A restore is one ordinary edit: every open page sees it arrive, as it sees anybody's typing.
 * `nudge` tells the other pages that the list changed (see `main`).
 */
function versionPanel({ userId, canEdit, names, nudge }) {
  const list = document.querySelector('#versions');
  const form = document.querySelector('#save-version');
  const refresh = async () => {
    const versions = await api('GET', '/versions', userId);
    list.replaceChildren(
      ...versions.map((version) => {
        const item = element('li', undefined, { className: 'version' });
        item.dataset.kind = version.kind;
        item.append(
          element('strong', version.name ?? { auto: 'Saved automatically', restore: 'Before a restore' }[version.kind]),
          element('small', new Date(version.createdAt).toLocaleString()),
          element('small', version.authors.map(names).join(', ') || 'no changes'),
        );
        if (canEdit) {
          const restore = element('button', 'Restore', { type: 'button' });
          restore.onclick = async () => {
            await api('POST', '/versions/restore', userId, { versionId: version.versionId });
            await refresh();
            nudge();
          };
          item.append(restore);
        }
        return item;
      }),
    );
  };
  if (canEdit) {
    form.hidden = false;
    form.onsubmit = async (event) => {
      event.preventDefault();
      await api('POST', '/versions', userId, { name: form.elements.name.value.trim() });
      form.reset();
      await refresh();
      nudge();
    };
  }
  return refresh;
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
      CommentHighlights,
    ],
  });

  // The lists beside the editor come from this application's server. When a page changes one, it says so in its
  // awareness state (relayed live like carets), and the other pages read the list again; a slow poll picks up what
  // changes elsewhere (automatic versions, another application's calls).
  const names = (id) => people.find((person) => person.id === id)?.name ?? id;
  let changes = 0;
  const nudge = () => provider.awareness.setLocalStateField('listsChanged', ++changes);
  const lists = [
    versionPanel({ userId, canEdit: session.accessRole === 'editor', names, nudge }),
    commentPanel({ editor, userId, api, names, nudge, element }),
  ];
  const refreshLists = () => Promise.all(lists.map((refresh) => refresh())).catch((error) => console.error(error));
  const seen = new Map();
  provider.awareness.on('change', () => {
    for (const [clientId, state] of provider.awareness.getStates()) {
      if (clientId === ydoc.clientID || state.listsChanged === undefined) continue;
      if (seen.get(clientId) !== state.listsChanged) {
        seen.set(clientId, state.listsChanged);
        refreshLists();
      }
    }
  });
  refreshLists();
  setInterval(refreshLists, 30_000);

  // For the browser test and your developer tools.
  window.example = { editor, ydoc, provider, session: () => session, refreshLists };
}

// A button whose call failed (this server or the service refused it: a comment on text the service has not stored
// yet, a version of an editor that no longer exists) says why beside the lists, until the next call succeeds.
const problem = document.querySelector('#problem');
window.addEventListener('unhandledrejection', (event) => {
  problem.textContent = event.reason?.message ?? String(event.reason);
});
addEventListener('click', () => (problem.textContent = ''), { capture: true });

main().catch((error) => {
  console.error(error);
  showStatus('error', `Error: ${error.message}`);
});
