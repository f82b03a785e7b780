/**
 * docs/live-sync.md §2's browser code, run as written: the block that connects the provider and the block that
 * keeps its token fresh ("Refreshing an expired token"), extracted from the Markdown and executed together, against
 * a stand-in for the provider and for the reader's server (`fetch`) that hands out tokens of a few seconds. The
 * block once reassigned a `const` and called a function no block defined, which threw only an hour after the page
 * loaded; no type check of the prose could see that. Reading the Markdown here is a test of the docs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as Y from 'yjs';
import { waitFor } from '../support/wait';

const DOC = join(__dirname, '..', '..', 'docs', 'live-sync.md');

/** The first `js` block after `heading` in docs/live-sync.md. */
function jsAfter(heading: string): string {
  const text = readFileSync(DOC, 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  const block = at < 0 ? null : /^```js\n([\s\S]*?)^```$/m.exec(text.slice(at));
  if (block === null) throw new Error(`docs/live-sync.md has no js block after "${heading}".`);
  return block[1] as string;
}

type Handler = (...args: any[]) => unknown;

/** The stock provider's surface the docs use: its options, `params`, events, `connect()`. */
class FakeProvider {
  static made: FakeProvider[] = [];
  readonly handlers = new Map<string, Handler[]>();
  params: Record<string, string>;
  connects = 0;
  /** What a handler threw or rejected with: the page's uncaught errors. */
  readonly errors: unknown[] = [];

  constructor(
    readonly url: string,
    readonly room: string,
    readonly doc: Y.Doc,
    readonly options: Record<string, any>,
  ) {
    this.params = options.params;
    FakeProvider.made.push(this);
  }

  on(name: string, handler: Handler): void {
    this.handlers.set(name, [...(this.handlers.get(name) ?? []), handler]);
  }

  emit(name: string, ...args: unknown[]): void {
    for (const handler of this.handlers.get(name) ?? []) {
      try {
        Promise.resolve(handler(...args)).catch((error) => this.errors.push(error));
      } catch (error) {
        this.errors.push(error);
      }
    }
  }

  connect(): void {
    this.connects += 1;
  }
}

/** The reader's server (`/my-app/live-session`): token-1, token-2, ..., each good for `lifetimeMs`. */
class FakeServer {
  calls = 0;
  lifetimeMs = 3_600_000;
  mode: 'ok' | 'refuses' | 'down' = 'ok';

  readonly fetch = async (url: string) => {
    this.calls += 1;
    if (!url.startsWith('/my-app/live-session')) throw new Error(`Unexpected fetch of ${url}`);
    if (this.mode === 'down') throw new TypeError('fetch failed');
    const body =
      this.mode === 'refuses'
        ? { error: 'PERMISSION_DENIED User has no access to this document.' }
        : {
            token: `token-${this.calls}`,
            serverUrl: 'ws://127.0.0.1:3000/v2/crdt/live',
            room: 'room',
            accessRole: 'editor',
            expiresAt: Date.now() + this.lifetimeMs,
          };
    const status = this.mode === 'refuses' ? 403 : 200;
    return { ok: status === 200, status, json: async () => body, text: async () => JSON.stringify(body) };
  };
}

interface Page {
  provider: FakeProvider;
  session(): { token: string; expiresAt: number };
  warnings: unknown[][];
  /** The delays of the timers the code set. */
  delays: number[];
}

const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (
  ...args: string[]
) => (...args: unknown[]) => Promise<any>;
let timers: NodeJS.Timeout[] = [];

/** Runs the two blocks in one scope, as one module of the page would, with the imports bound to the stand-ins. */
async function loadPage(server: FakeServer): Promise<Page> {
  const code = [
    jsAfter('## 2. The browser: connect with the stock provider'),
    jsAfter('### Refreshing an expired token'),
  ].join('\n');
  const imports = [...code.matchAll(/^import .* from '([^']+)';.*$/gm)].map((match) => match[1]);
  expect(imports).toEqual(['yjs', 'y-websocket', './live-socket.js']);
  const body = code.replace(/^import .*$/gm, '');
  const warnings: unknown[][] = [];
  const delays: number[] = [];
  const page = {
    Y,
    WebsocketProvider: FakeProvider,
    createLiveSocket: () => class LiveSocket {},
    fetch: server.fetch,
    console: { ...console, warn: (...args: unknown[]) => warnings.push(args) },
    setTimeout: (callback: () => void, ms: number) => {
      delays.push(ms);
      const timer = setTimeout(callback, ms);
      timers.push(timer);
      return timer;
    },
    clearTimeout,
  };
  const run = new AsyncFunction(...Object.keys(page), `${body}\nreturn { provider, session: () => session };`);
  const { provider, session } = await run(...Object.values(page));
  return { provider, session, warnings, delays };
}

/** Waits for `check`, failing at once with what the page threw. */
async function waitOnPage(page: Page, check: () => boolean, what: string): Promise<void> {
  await waitFor(
    () => {
      if (page.provider.errors.length > 0) throw page.provider.errors[0];
      return check();
    },
    { what },
  );
}

afterEach(() => {
  for (const timer of timers) clearTimeout(timer);
  timers = [];
  FakeProvider.made = [];
});

describe("docs/live-sync.md's browser code", () => {
  it('connects the provider with the session from your server, its token in params', async () => {
    const server = new FakeServer();

    const page = await loadPage(server);

    expect(FakeProvider.made).toHaveLength(1);
    expect({
      url: page.provider.url,
      room: page.provider.room,
      params: page.provider.params,
      disableBc: page.provider.options.disableBc,
    }).toEqual({
      url: 'ws://127.0.0.1:3000/v2/crdt/live',
      room: 'room',
      params: { token: 'token-1' },
      disableBc: true,
    });
    expect(page.provider.options.WebSocketPolyfill).toBeDefined();
  });

  it('renews the token before it expires, again and again, without waiting for a reconnect', async () => {
    const server = new FakeServer();
    server.lifetimeMs = 1_000; // renewed halfway: every 0.5 s

    const page = await loadPage(server);

    await waitOnPage(page, () => page.provider.params.token === 'token-3', 'two renewals by the timer');
    expect(page.session().token).toBe('token-3');
  });

  it('renews at once when a connection closes near the expiry (a timer that ran late), and not otherwise', async () => {
    const earlyServer = new FakeServer();
    const early = await loadPage(earlyServer);
    early.provider.emit('connection-close', null, early.provider);
    expect(earlyServer.calls).toBe(1); // an hour left: nothing to do (a renewal would have asked the server at once)

    const server = new FakeServer();
    server.lifetimeMs = 30_000; // half a minute left, the timer 15 s away
    const page = await loadPage(server);
    page.provider.emit('connection-close', null, page.provider);

    await waitOnPage(page, () => page.provider.params.token === 'token-2', 'the token renewed after the first close');
    page.provider.emit('connection-close', null, page.provider);
    await waitOnPage(page, () => page.provider.params.token === 'token-3', 'renewed again: still under a minute left');
  });

  it('renews and reconnects after a refusal, and stays closed when your server refuses the user', async () => {
    const server = new FakeServer();
    const page = await loadPage(server);

    page.provider.emit('closed', { code: 4403, reason: 'Token expired.' }, page.provider);
    await waitOnPage(page, () => page.provider.connects === 1, 'the provider reconnected');
    expect(page.provider.params.token).toBe('token-2');

    server.mode = 'refuses';
    page.provider.emit('closed', { code: 4403, reason: 'User has no access to this document.' }, page.provider);
    await waitOnPage(
      page,
      () => page.warnings.some(([what]) => what === 'Live session not renewed:'),
      'the failed renewal reported',
    );
    expect(page.provider.connects).toBe(1);
    expect(page.provider.params.token).toBe('token-2');
  });

  it('tries again in 5 s while your server cannot be reached', async () => {
    const server = new FakeServer();
    server.lifetimeMs = 400;
    const page = await loadPage(server);
    server.mode = 'down';

    await waitOnPage(page, () => page.delays.includes(5_000), 'a retry scheduled after the failed renewal');
    expect(page.provider.params.token).toBe('token-1');
  });
});
