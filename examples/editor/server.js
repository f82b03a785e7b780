/**
 * The example application's server: what a customer's own server does for live editing (docs/live-sync.md §1).
 *
 * - It holds the service's credentials (API key and auth token). The browser never sees them: it asks this server
 *   for a live session (`GET /session?user=<id>`), and this server asks the service (`/v2/crdt/live/authorize`).
 * - On start it makes sure the organization, its three users and the document exist (idempotent calls, so a
 *   restart changes nothing), and gives the document some first content.
 * - It serves the page (public/) and its bundle (public/app.js, built by `npm run build`), and answers the page's
 *   calls for the lists beside the editor (versions, comments) by calling the service on the user's behalf.
 *
 * A real application would take the user from its own sign-in instead of the query string; picking one here is
 * what lets two windows show two people.
 *
 * Settings (environment):
 *   SERVICE_URL          the service's base URL (default http://127.0.0.1:3000, the local stack; a deployed stack's
 *                        ApiUrl output works the same)
 *   SERVICE_API_KEY, SERVICE_AUTH_TOKEN
 *                        an API key and its auth token; without them the credentials saved in CREDENTIALS_FILE are
 *                        used, and without those a workspace is created (`/v2/workspace/create`, as the README's
 *                        quick start does) and its credentials saved there; a new one again when the service
 *                        refuses the saved ones (403 `Invalid API key.`: a local stack started afresh)
 *   CREDENTIALS_FILE     default .data/credentials.json next to this file
 *   PORT, HOST           where this server listens (default 8080 on 127.0.0.1; PORT=0 picks a free port)
 *   ORGANIZATION_ID, DOCUMENT_ID
 *                        default `example` and `welcome`
 *   LIVE_ADAPTER         `auto` (default: the adapter when the session's serverUrl is wss://, as on AWS), `always`
 *                        or `never`; see src/app.js
 *   SESSION_EXPIRES_IN   seconds a session token may open connections (default 3600; 60–86400)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const PUBLIC = join(HERE, 'public');

const config = {
  serviceUrl: (process.env.SERVICE_URL || 'http://127.0.0.1:3000').replace(/\/+$/, ''),
  apiKey: process.env.SERVICE_API_KEY || undefined,
  authToken: process.env.SERVICE_AUTH_TOKEN || undefined,
  credentialsFile: process.env.CREDENTIALS_FILE || join(HERE, '.data', 'credentials.json'),
  port: Number(process.env.PORT ?? 8080),
  host: process.env.HOST || '127.0.0.1',
  organizationId: process.env.ORGANIZATION_ID || 'example',
  documentId: process.env.DOCUMENT_ID || 'welcome',
  liveAdapter: process.env.LIVE_ADAPTER || 'auto',
  sessionExpiresIn: Number(process.env.SESSION_EXPIRES_IN ?? 3600),
};
if (!['auto', 'always', 'never'].includes(config.liveAdapter))
  throw new Error(`LIVE_ADAPTER must be auto, always or never, not ${config.liveAdapter}.`);
if ((config.apiKey === undefined) !== (config.authToken === undefined))
  throw new Error('Set both SERVICE_API_KEY and SERVICE_AUTH_TOKEN, or neither.');

/** The people of this example. In a real application: your users, from your sign-in. */
const USERS = [
  { userId: 'ann', name: 'Ann Lee', email: 'ann@example.com', accessRole: 'editor', color: '#e8590c' },
  { userId: 'bob', name: 'Bob Stone', email: 'bob@example.com', accessRole: 'editor', color: '#1c7ed6' },
  { userId: 'vic', name: 'Vic Park', email: 'vic@example.com', accessRole: 'viewer', color: '#2f9e44' },
];

/** The rich-text editor of the document. `xml` with contentKey `default`: a Y.XmlFragment where Tiptap looks for it. */
const EDITOR = { editorId: 'body', type: 'xml', contentKey: 'default' };
const FIRST_CONTENT =
  '<paragraph>Welcome! Open this page as another person in a second window, and type in both.</paragraph>';

/** An error answer of the service: its code (`NOT_FOUND`, ...) and message. */
class ServiceError extends Error {
  constructor(path, status, error) {
    super(`${path}: ${error?.status ?? status} ${error?.message ?? ''}`.trim());
    this.status = status;
    this.code = error?.status;
    this.serviceMessage = error?.message;
  }
}

/**
 * The service no longer knows these credentials: `PERMISSION_DENIED` `Invalid API key.` for an unknown key or a
 * wrong token (docs/decisions.md §2), as after a local stack started afresh (`--in-memory`, a new DATA_DIR), or
 * `UNAUTHENTICATED` when they are missing. Not a user's `PERMISSION_DENIED` (`User has no access ...`).
 */
const refusesCredentials = (error) =>
  error instanceof ServiceError &&
  (error.code === 'UNAUTHENTICATED' ||
    (error.code === 'PERMISSION_DENIED' && error.serviceMessage === 'Invalid API key.'));

/** POSTs `{data}` to the service and returns `result.data` (or the whole result when it has none). */
async function call(path, data, headers) {
  const response = await fetch(`${config.serviceUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ data }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok || body.error !== undefined) throw new ServiceError(path, response.status, body.error);
  return body.result?.data ?? body.result;
}

let credentials;
const withKey = (path, data) =>
  call(path, data, { 'x-service-api-key': credentials.apiKey, 'x-service-auth-token': credentials.authToken });

/** A new workspace and its first API key's auth token: the README's quick start, steps 1 and 3. */
async function createWorkspace() {
  const workspace = await call('/v2/workspace/create', { ownerEmail: `editor-example+${Date.now()}@example.com` });
  const apiKey = Object.keys(workspace.apiKeyList)[0];
  const tokens = await call(
    '/v2/workspace/authtokens/get',
    { apiKey },
    { 'x-service-workspace-id': workspace.id, 'x-service-workspace-auth-token': workspace.authToken },
  );
  return { serviceUrl: config.serviceUrl, workspaceId: workspace.id, apiKey, authToken: tokens.authTokens[0].token };
}

async function savedCredentials() {
  try {
    const saved = JSON.parse(await readFile(config.credentialsFile, 'utf8'));
    return saved.serviceUrl === config.serviceUrl ? saved : undefined;
  } catch {
    return undefined;
  }
}

async function saveCredentials(created) {
  await mkdir(dirname(config.credentialsFile), { recursive: true });
  await writeFile(config.credentialsFile, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
}

/** The organization, its users and the document, each created only when missing; then the document's first content. */
async function seed() {
  await withKey('/v2/users/add', {
    organizationId: config.organizationId,
    createOrganization: true,
    users: USERS.map(({ userId, name, email, accessRole }) => ({ userId, name, email, accessRole })),
  });
  await withKey('/v2/organizations/documents/add', {
    organizationId: config.organizationId,
    documents: [{ documentId: config.documentId, documentName: 'Welcome' }],
  }).catch(ignore('ALREADY_EXISTS'));
  await withKey('/v2/crdt/add', {
    organizationId: config.organizationId,
    documentId: config.documentId,
    ...EDITOR,
    data: FIRST_CONTENT,
  }).catch(ignore('ALREADY_EXISTS'));
}

const ignore = (code) => (error) => {
  if (!(error instanceof ServiceError) || error.code !== code) throw error;
};

const configured = config.apiKey !== undefined;
const REFUSED_CONFIGURED =
  'The service refused SERVICE_API_KEY and SERVICE_AUTH_TOKEN (Invalid API key.): set the credentials of ' +
  `an API key that ${config.serviceUrl} knows, or unset both to let this example create a workspace of its own.`;

/** A new workspace (the README's quick start), saved, and seeded. */
async function startAfresh() {
  credentials = await createWorkspace();
  await saveCredentials(credentials);
  await seed();
}

async function setUp() {
  if (configured) {
    credentials = { apiKey: config.apiKey, authToken: config.authToken };
    try {
      await seed();
    } catch (error) {
      if (refusesCredentials(error)) throw new Error(REFUSED_CONFIGURED);
      throw error;
    }
    return;
  }
  credentials = await savedCredentials();
  if (credentials !== undefined) {
    try {
      await seed();
      return;
    } catch (error) {
      // A local stack started afresh (`--in-memory`, or a new data folder) no longer knows the saved key: it answers
      // 403 PERMISSION_DENIED `Invalid API key.`. Make a new workspace, as on the first start.
      if (!refusesCredentials(error)) throw error;
      console.log(`The service refused the saved credentials (${error.message}); creating a new workspace.`);
    }
  }
  await startAfresh();
}

/**
 * `call()` once more after the service was set up again, when it answered that it no longer knows this server's
 * credentials or the organization or document (a local stack restarted afresh while this server ran). One
 * recovery at a time: the pages asking at once wait for the same new workspace.
 */
let recovering = null;
async function withRecovery(call) {
  const before = credentials;
  try {
    return await call();
  } catch (error) {
    const stale = refusesCredentials(error);
    if (stale && configured) throw Object.assign(new Error(REFUSED_CONFIGURED), { status: 403 });
    if (!stale && !(error instanceof ServiceError && error.code === 'NOT_FOUND')) throw error;
    console.log(
      `The service no longer knows this example's ${stale ? 'credentials' : 'organization or document'} (${error.message}); setting it up again.`,
    );
    // A recovery that another call already finished changed the credentials: just try again with them.
    if (credentials === before) {
      recovering ??= (stale ? startAfresh() : seed()).finally(() => {
        recovering = null;
      });
      await recovering;
    }
    return call();
  }
}

/** GET /session?user=<id>: a live session for that user on the document's editor (docs/live-sync.md §1). */
async function session(userId) {
  const user = USERS.find((candidate) => candidate.userId === userId);
  if (user === undefined)
    return {
      status: 404,
      body: { error: `No user ${userId}; the users are ${USERS.map((u) => u.userId).join(', ')}.` },
    };
  const live = await withRecovery(() =>
    withKey('/v2/crdt/live/authorize', {
      organizationId: config.organizationId,
      documentId: config.documentId,
      editorId: EDITOR.editorId,
      userId,
      // Creates the editor empty if it was deleted since the seed.
      type: EDITOR.type,
      contentKey: EDITOR.contentKey,
      expiresIn: config.sessionExpiresIn,
    }),
  );
  const adapter =
    config.liveAdapter === 'always' || (config.liveAdapter === 'auto' && live.serverUrl.startsWith('wss:'));
  return {
    status: 200,
    body: { ...live, field: EDITOR.contentKey, adapter, user: { id: user.userId, name: user.name, color: user.color } },
  };
}

/** The document's editor, as every `/v2/crdt/versions/*` call names it. */
const editorIds = () => ({
  organizationId: config.organizationId,
  documentId: config.documentId,
  editorId: EDITOR.editorId,
});

/**
 * Who asks, from the page's `?user=`: in a real application, the signed-in user of your session. Saving and
 * restoring versions changes the document, so only an editor may (a viewer only reads the list).
 */
function person(userId, { editing = false } = {}) {
  const user = USERS.find((candidate) => candidate.userId === userId);
  if (user === undefined)
    throw Object.assign(new Error(`No user ${userId}; the users are ${USERS.map((u) => u.userId).join(', ')}.`), {
      status: 404,
    });
  if (editing && user.accessRole !== 'editor')
    throw Object.assign(new Error(`${user.name} is a viewer: only editors change the document.`), { status: 403 });
  return user;
}

/**
 * The lists beside the editor: this server calls the service with its API key, the page calls this server.
 *
 * Versions (decisions §14): `GET /versions` lists the newest 20; `POST /versions {name}` saves one, with the user
 * as its author; `POST /versions/restore {versionId}` restores one, which reaches every open page as an ordinary
 * edit. Comments (decisions §16): anyone with access to the document (a viewer too) comments and resolves.
 */
const ROUTES = {
  'GET /versions': async () => withRecovery(() => withKey('/v2/crdt/versions/get', { ...editorIds(), pageSize: 20 })),
  'POST /versions': async (user, { name }) =>
    withKey('/v2/crdt/versions/create', {
      ...editorIds(),
      ...(name ? { name: String(name).slice(0, 200) } : {}),
      userId: person(user, { editing: true }).userId,
    }),
  'POST /versions/restore': async (user, { versionId }) =>
    withKey('/v2/crdt/versions/restore', {
      ...editorIds(),
      versionId: String(versionId ?? ''),
      userId: person(user, { editing: true }).userId,
    }),
  // Comments (decisions §16). The page sends the selection as relative positions it made (base64 of
  // Y.encodeRelativePosition); this server names the editor they are in. The service checks them against the
  // editor's stored state, and answers each thread's anchor resolved (start, end, quotedText, orphaned).
  'GET /comments': async (user) =>
    withKey('/v2/commentannotations/get', {
      organizationId: config.organizationId,
      documentId: config.documentId,
      viewerUserId: person(user).userId,
    }),
  'POST /comments': async (user, { text, anchor }) => {
    const added = await withKey('/v2/commentannotations/add', {
      organizationId: config.organizationId,
      documentId: config.documentId,
      verifyUserPermissions: true,
      commentAnnotations: [
        {
          anchor: { editorId: EDITOR.editorId, from: String(anchor?.from ?? ''), to: String(anchor?.to ?? '') },
          commentData: [{ commentText: String(text ?? ''), from: { userId: person(user).userId } }],
        },
      ],
    });
    return oneOf(added);
  },
  // Resolving sets a status of type `terminal` (the thread's `resolved` is then true).
  'POST /comments/resolve': async (user, { annotationId }) => {
    person(user);
    const updated = await withKey('/v2/commentannotations/update', {
      organizationId: config.organizationId,
      documentId: config.documentId,
      annotationIds: [String(annotationId ?? '')],
      updatedData: { status: { id: 'RESOLVED', name: 'Resolved', type: 'terminal' } },
    });
    return oneOf(updated);
  },
};

/** The one item of a batch answer (keyed by id, each with `success`), or its error. */
function oneOf(batch) {
  const [item] = Object.values(batch);
  if (item?.success !== true) throw Object.assign(new Error(item?.message ?? 'Not done.'), { status: 400 });
  return item;
}

/** A request's JSON body (a small one: the page sends a name or an id). */
async function readJson(request) {
  let text = '';
  for await (const chunk of request) {
    text += chunk;
    if (text.length > 64 * 1024) throw Object.assign(new Error('Body too large.'), { status: 413 });
  }
  try {
    return text === '' ? {} : JSON.parse(text);
  } catch {
    throw Object.assign(new Error('The body is not JSON.'), { status: 400 });
  }
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.png': 'image/png',
};
const FILES = new Set(['/index.html', '/app.js', '/app.js.map', '/style.css']);

async function handle(request, response) {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const send = (status, body, type = 'application/json') => {
    response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    response.end(type === 'application/json' ? JSON.stringify(body) : body);
  };
  const route = ROUTES[`${request.method} ${url.pathname}`];
  if (route !== undefined) {
    const user = url.searchParams.get('user') ?? '';
    return send(200, await route(user, request.method === 'POST' ? await readJson(request) : {}));
  }
  if (request.method !== 'GET') return send(405, { error: 'GET only.' });
  if (url.pathname === '/session') {
    const answer = await session(url.searchParams.get('user') ?? '');
    return send(answer.status, answer.body);
  }
  if (url.pathname === '/users')
    return send(
      200,
      USERS.map(({ userId, name, accessRole, color }) => ({ id: userId, name, accessRole, color })),
    );
  const file = url.pathname === '/' ? '/index.html' : url.pathname;
  if (!FILES.has(file)) return send(404, { error: 'Not found.' });
  return send(200, await readFile(join(PUBLIC, file)), TYPES[extname(file)]);
}

const server = createServer((request, response) => {
  handle(request, response).catch((error) => {
    console.error(error);
    const status =
      (error instanceof ServiceError && error.status < 500) || [400, 403, 404, 413].includes(error.status)
        ? error.status
        : 502;
    if (!response.headersSent) response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: error.message }));
  });
});

try {
  await setUp();
} catch (error) {
  // A problem this example can name gets its one sentence; anything else keeps its stack.
  console.error(
    error instanceof ServiceError || error.message === REFUSED_CONFIGURED ? `Editor example: ${error.message}` : error,
  );
  process.exit(1);
}
server.listen(config.port, config.host, () => {
  const { port } = server.address();
  console.log(
    `Editor example at http://${config.host}:${port} (service ${config.serviceUrl}, organization ${config.organizationId}, document ${config.documentId})`,
  );
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
  });
}
