/**
 * The example application (examples/editor) in a real browser: headless Chromium, driven by puppeteer-core, with
 * pages of two editors and a viewer on one document, against a local stack of this test's own (restarted on the
 * same data folder and port) and the example's server started by its own command (`npm start`). One editor's page
 * connects through the adapter (clients/live-socket.js, as on AWS), the others with the stock provider alone.
 *
 * It saves a picture of two windows side by side (carets, versions, a highlighted comment) to
 * .cache/screenshots/editor-example.png; with UPDATE_SCREENSHOT=1 it also writes docs/editor-example.png, the one
 * the README shows.
 *
 * The tests run in order and share the pages: each goes on from the document the one before left.
 */
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { pickFreePort } from '../../local/dynamodb-local';
import { startExample, stopExample, type ExampleServer } from '../support/editor-example';
import {
  PROJECT_ROOT,
  spawnLocalStack,
  stopLocalStackProcess,
  type LocalStackProcess,
} from '../support/local-stack-process';
import { eventually, WAIT_CEILING_MS } from '../support/wait';

// What the page callbacks use: they run in the browser, where these are the page's globals (the project's types
// have no DOM library).
declare const window: any;
declare const document: any;

const BROWSERS = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
/** Puppeteer's waits, as the project's: a ceiling only a broken run reaches. */
const WAIT = { timeout: WAIT_CEILING_MS, polling: 50 };

/** A Chromium binary: CHROMIUM_PATH, or the first of BROWSERS on the PATH. */
function findChromium(): string {
  const candidates = process.env.CHROMIUM_PATH
    ? [process.env.CHROMIUM_PATH]
    : BROWSERS.flatMap((name) => (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, name)));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // the next one
    }
  }
  const found = process.env.CHROMIUM_PATH
    ? `CHROMIUM_PATH (${process.env.CHROMIUM_PATH}) is not an executable`
    : 'found none on the PATH (chromium, chromium-browser, google-chrome)';
  throw new Error(
    `The browser test needs Chromium, and ${found}. Install ` +
      "Debian's package (`sudo apt-get install -y --no-install-recommends chromium`; bash .ci/run does this when it is " +
      'missing), or set CHROMIUM_PATH to a Chrome or Chromium binary.',
  );
}

/** What a page shows and holds, read in the page. */
const editorText = (page: Page): Promise<string> => page.evaluate(() => window.example.editor.getText());
const storedXml = (page: Page): Promise<string> =>
  page.evaluate(() => window.example.ydoc.getXmlFragment(window.example.session().field).toString());
const caretNames = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    [...document.querySelectorAll('.collaboration-carets__label')].map((label: any) => label.textContent),
  );

/** Types `text` at the start or the end of the first paragraph, key by key as a person does. */
async function typeInFirstParagraph(page: Page, where: 'start' | 'end', text: string): Promise<void> {
  await page.evaluate((at: string) => {
    const { editor } = window.example;
    const paragraph = editor.state.doc.firstChild;
    editor.commands.setTextSelection(at === 'start' ? 1 : 1 + paragraph.content.size);
    // The DOM focus at once (Tiptap's focus command waits for an animation frame, which a page in the background
    // may never get).
    editor.view.focus();
  }, where);
  await page.keyboard.type(text);
}

/** Waits until the page's editor text passes `done`, and returns it; on the ceiling, the error shows the last text. */
const waitForText = (page: Page, done: (text: string) => boolean, what: string): Promise<string> =>
  eventually(() => editorText(page), done, { what, intervalMs: 50 });

async function waitSynced(page: Page): Promise<void> {
  await page.waitForFunction(() => window.example?.provider.wsconnected && window.example.provider.synced, WAIT);
}

describe('the example editor in a browser', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'editor-example-'));
  let port: number;
  let stack: LocalStackProcess | undefined;
  let example: ExampleServer | undefined;
  let browser: Browser | undefined;
  let ann: Page;
  let bob: Page;
  let vic: Page;
  let headers: Record<string, string>;
  const doc = { organizationId: 'example', documentId: 'welcome', editorId: 'body' };

  const startStack = () =>
    spawnLocalStack({ args: [], env: { PORT: String(port), DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'ERROR' } });
  const restGet = async (): Promise<string> => {
    const response = await fetch(`${stack?.baseUrl}/v2/crdt/get`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ data: doc }),
    });
    const body = (await response.json()) as any;
    if (!response.ok) throw new Error(`crdt/get: ${JSON.stringify(body)}`);
    return body.result.data[0].data as string;
  };
  const openAs = async (userId: string, query = ''): Promise<Page> => {
    const page = await (browser as Browser).newPage();
    await page.setViewport({ width: 640, height: 420 });
    // Every page behaves as the focused window, as two windows side by side do for the people typing in them.
    await page.emulateFocusedPage(true);
    await page.goto(`${example?.url}/?user=${userId}${query}`);
    await waitSynced(page);
    return page;
  };

  beforeAll(async () => {
    const executablePath = findChromium();
    port = await pickFreePort();
    stack = await startStack();
    const credentialsFile = join(dataDir, 'example-credentials.json');
    // Tokens of 60 s: every reconnect in this test goes through the page's token refresh.
    example = await startExample({
      SERVICE_URL: stack.baseUrl,
      PORT: '0',
      CREDENTIALS_FILE: credentialsFile,
      SESSION_EXPIRES_IN: '60',
    });
    const saved = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(credentialsFile, 'utf8')));
    headers = { 'x-service-api-key': saved.apiKey, 'x-service-auth-token': saved.authToken };
    browser = await puppeteer.launch({ executablePath, args: ['--no-sandbox'], protocolTimeout: WAIT_CEILING_MS });
    // Bob through the adapter (base64 text frames within API Gateway's limits, as on AWS), Ann and Vic with the
    // stock provider alone: one room, both framings.
    [ann, bob, vic] = await Promise.all([openAs('ann'), openAs('bob', '&adapter=1'), openAs('vic')]);
  });

  afterAll(async () => {
    await browser?.close();
    await stopExample(example);
    if (stack !== undefined) await stopLocalStackProcess(stack.child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('converges when two editors type into the same paragraph at the same time, and /v2/crdt/get returns it', async () => {
    const seeded = await editorText(ann);
    const framing = (page: Page) =>
      page.evaluate(() => new URL(window.example.provider.ws.url).searchParams.get('encoding'));
    expect([await framing(ann), await framing(bob)]).toEqual([null, 'base64']);

    await Promise.all([
      typeInFirstParagraph(ann, 'end', ' Ann adds a sentence at the end.'),
      typeInFirstParagraph(bob, 'start', 'Bob starts the paragraph. '),
    ]);

    const expected = `Bob starts the paragraph. ${seeded} Ann adds a sentence at the end.`;
    for (const page of [ann, bob, vic])
      await waitForText(page, (text) => text === expected, 'the pages to show both sentences');
    const xml = await storedXml(ann);
    expect(await storedXml(bob)).toBe(xml);
    expect(
      await eventually(restGet, (stored) => stored === xml, { what: 'crdt/get to return what the pages show' }),
    ).toBe(xml);
  });

  it("shows each editor the other's caret with their name", async () => {
    const shows = (page: Page, names: string[]) =>
      page.waitForFunction(
        (expected: string[]) =>
          expected.every((name) =>
            [...document.querySelectorAll('.collaboration-carets__label')].some(
              (label: any) => label.textContent === name,
            ),
          ),
        WAIT,
        names,
      );
    await Promise.all([shows(ann, ['Bob Stone']), shows(bob, ['Ann Lee']), shows(vic, ['Ann Lee', 'Bob Stone'])]);

    expect(await caretNames(ann)).toEqual(['Bob Stone']);
    expect(await caretNames(bob)).toEqual(['Ann Lee']);
    expect((await caretNames(vic)).sort()).toEqual(['Ann Lee', 'Bob Stone']);
  });

  it('shows a viewer every change, and nothing the viewer does reaches the document', async () => {
    expect(await vic.$eval('.tiptap', (element: any) => element.getAttribute('contenteditable'))).toBe('false');
    const before = await editorText(ann);

    // Typing into the read-only editor changes nothing, even in the viewer's page.
    await vic.focus('.tiptap');
    await vic.keyboard.type('typed by the viewer');
    // Past the read-only page, as a modified client would: the change is sent, and the service drops it. Then a
    // presence change on the same connection, which the service relays: once it arrives, the change before it
    // has been handled (a connection's frames are handled in order).
    await vic.evaluate(() => {
      window.example.editor.commands.insertContentAt(1, 'forced by the viewer ');
      window.example.provider.awareness.setLocalStateField('probe', 1);
    });
    await ann.waitForFunction(
      () => [...window.example.provider.awareness.getStates().values()].some((state: any) => state.probe === 1),
      WAIT,
    );
    await typeInFirstParagraph(ann, 'end', ' Seen by Vic.');

    await vic.waitForFunction(() => window.example.editor.getText().endsWith(' Seen by Vic.'), WAIT);
    expect(await editorText(vic)).toBe(`forced by the viewer ${before} Seen by Vic.`);
    expect(
      await eventually(
        () => editorText(bob),
        (text) => text === `${before} Seen by Vic.`,
        { what: "Ann's edit at Bob's" },
      ),
    ).toBe(`${before} Seen by Vic.`);
    expect(
      await eventually(restGet, (stored) => stored.includes('Seen by Vic.'), { what: "crdt/get to return Ann's edit" }),
    ).not.toContain('viewer');
    // Reloaded, the viewer's page holds what the service holds: the forced change was never kept.
    await vic.reload();
    await waitSynced(vic);
    expect(await editorText(vic)).toBe(`${before} Seen by Vic.`);
  });

  it('shows a /v2/crdt/update from the server in the open pages', async () => {
    const current = await restGet();

    const response = await fetch(`${stack?.baseUrl}/v2/crdt/update`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        data: {
          ...doc,
          type: 'xml',
          contentKey: 'default',
          data: `${current}<paragraph>Added by the server.</paragraph>`,
        },
      }),
    });

    expect(response.status).toBe(200);
    for (const page of [ann, bob, vic]) {
      await page.waitForFunction(
        () => window.example.editor.state.doc.lastChild.textContent === 'Added by the server.',
        WAIT,
      );
    }
  });

  it('reconnects the pages after the local stack restarts, with fresh tokens, and they keep editing', async () => {
    const tokens = await Promise.all(
      [ann, bob].map((page) => page.evaluate(() => window.example.provider.params.token)),
    );
    await stopLocalStackProcess((stack as LocalStackProcess).child);
    await bob.waitForFunction(() => !window.example.provider.wsconnected, WAIT);
    // Typed while the service is down: kept in the page, and sent once it is back.
    await typeInFirstParagraph(bob, 'start', 'Offline: ');

    stack = await startStack();
    for (const page of [ann, bob, vic]) await waitSynced(page);
    await typeInFirstParagraph(ann, 'end', ' Back online.');

    for (const page of [ann, bob, vic]) {
      await page.waitForFunction(
        () => /^Offline: .* Back online\.$/.test(window.example.editor.state.doc.firstChild.textContent),
        WAIT,
      );
    }
    const xml = await storedXml(ann);
    expect(
      await eventually(restGet, (stored) => stored === xml, {
        what: 'crdt/get to return the edits around the restart',
      }),
    ).toBe(xml);
    // Each reconnect refreshed the token the provider connects with (60 s tokens are always near expiry), through
    // the example's server.
    for (const [index, page] of [ann, bob].entries()) {
      await page.waitForFunction(
        (old: string) => window.example.provider.params.token !== old,
        WAIT,
        tokens[index] as string,
      );
    }
  });

  it('saves a version in one window and restores it in the other: both show it live and stay connected', async () => {
    await typeInFirstParagraph(ann, 'end', ' Kept in a version.');
    // A version holds what the service has stored: wait until that is Ann's typing, then save.
    await eventually(restGet, (stored) => stored.includes('Kept in a version.'), {
      what: "crdt/get to return Ann's typing",
    });
    const kept = await editorText(ann);
    await ann.type('#save-version input', 'First draft');
    await ann.click('#save-version button');
    await ann.waitForFunction(() => document.querySelector('#versions li strong')?.textContent === 'First draft', WAIT);
    await typeInFirstParagraph(ann, 'end', ' Typed after the version.');

    // Bob's list shows it (Ann's page told the others the list changed): name, time and authors.
    const versionItems = (page: Page) =>
      page.evaluate(() =>
        [...document.querySelectorAll('#versions li')].map((item: any) => ({
          kind: item.dataset.kind,
          texts: [...item.querySelectorAll('strong, small')].map((part: any) => part.textContent),
        })),
      );
    await bob.waitForFunction(() => document.querySelector('#versions li strong')?.textContent === 'First draft', WAIT);
    const [saved] = await versionItems(bob);
    expect(saved?.kind).toBe('manual');
    expect(saved?.texts[2]?.split(', ')).toEqual(expect.arrayContaining(['Ann Lee']));
    expect(await vic.$eval('#save-version', (form: any) => form.hidden)).toBe(true);
    // Nor does the example's server save or restore for a viewer who calls it directly.
    const asViewer = await fetch(`${example?.url}/versions?user=vic`, { method: 'POST', body: '{"name":"Vic"}' });
    expect(asViewer.status).toBe(403);
    await waitForText(bob, (text) => text.includes('Typed after the version.'), "Ann's typing after the version");

    await bob.evaluate(() => document.querySelector('#versions li button').click());

    for (const page of [ann, bob, vic])
      expect(await waitForText(page, (text) => text === kept, 'the restored content, live in every page')).toBe(kept);
    for (const page of [ann, bob]) {
      expect(await page.evaluate(() => window.example.provider.wsconnected)).toBe(true);
      // The content before the restore is kept as a version of its own, newest first.
      await page.waitForFunction(() => document.querySelector('#versions li')?.dataset.kind === 'restore', WAIT);
    }
    // Still live after the restore: typing reaches the other page.
    await typeInFirstParagraph(bob, 'end', ' After the restore.');
    await waitForText(
      ann,
      (text) => text === kept.replace('Kept in a version.', 'Kept in a version. After the restore.'),
      "Bob's typing after the restore",
    );
  });

  it('anchors a comment on selected words, highlights them in the other window as edits move them, and resolves it (saving a picture of both windows)', async () => {
    const words = 'Welcome!';
    /** The highlighted text in a page, without the carets drawn inside it. */
    const highlighted = (page: Page) =>
      page.evaluate(() =>
        [...document.querySelectorAll('.comment-highlight')]
          .map((span: any) => {
            const copy = span.cloneNode(true);
            copy.querySelectorAll('.collaboration-carets__caret').forEach((caret: any) => caret.remove());
            return copy.textContent;
          })
          .join(''),
      );
    /** Selects `words` in the page's editor, or puts the caret just before them. */
    const select = (page: Page, how: 'words' | 'before') =>
      page.evaluate(
        (text: string, caret: boolean) => {
          const { editor } = window.example;
          let from = -1;
          editor.state.doc.descendants((node: any, position: number) => {
            if (from < 0 && node.isText && node.text.includes(text)) from = position + node.text.indexOf(text);
          });
          editor.commands.setTextSelection({ from, to: caret ? from : from + text.length });
          editor.view.focus();
        },
        words,
        how === 'before',
      );
    await select(ann, 'words');
    await ann.type('#add-comment textarea', 'Friendlier, please.');
    await ann.click('#add-comment button');

    // Bob's page reads the threads again (Ann's page told it the list changed) and highlights the same words.
    await bob.waitForFunction(() => document.querySelectorAll('#threads li').length === 1, WAIT);
    expect(await bob.$eval('#threads li', (item: any) => item.textContent)).toContain('Ann Lee: Friendlier, please.');
    expect(
      await eventually(
        () => highlighted(bob),
        (text) => text === words,
        { what: "Bob's highlight" },
      ),
    ).toBe(words);
    // Ann's own page highlights them once it has read the thread back (after its add answers, not at once).
    expect(
      await eventually(
        () => highlighted(ann),
        (text) => text === words,
        { what: "Ann's highlight" },
      ),
    ).toBe(words);

    // Ann types before the words, at the start of the paragraph and just before them: Bob's highlight follows the
    // words and takes in neither.
    await typeInFirstParagraph(ann, 'start', 'Moved along. ');
    await select(ann, 'before');
    await ann.keyboard.type('Hi! ');
    await waitForText(bob, (text) => /^Moved along\. .*Hi! Welcome!/.test(text), "Ann's typing before the words");
    expect(await highlighted(bob)).toBe(words);
    expect(await highlighted(ann)).toBe(words);
    // The thread quotes the words: the service's quotedText, or (anchors stored unresolved) Bob's page's own reading.
    expect(await bob.$eval('#threads li q', (quote: any) => quote.textContent)).toBe(words);
    // The picture the README shows: two people, their carets, the version list, the comment and its highlight.
    await saveSideBySide(browser as Browser, [ann, bob]);

    // Bob resolves the thread: Ann's list shows it resolved, and the highlight goes.
    // A locator finds the button again if the list is drawn anew between finding and clicking it (Bob's page redraws
    // the threads as Ann's edits move their anchors).
    await bob.locator('#threads li button').setTimeout(WAIT.timeout).click();
    await ann.waitForFunction(() => document.querySelector('#threads li')?.dataset.resolved === 'true', WAIT);
    expect(await ann.$eval('#threads li small', (small: any) => small.textContent)).toBe('Resolved');
    expect(await highlighted(ann)).toBe('');
  });
});

/** Pixels the pictured pages get below the test's 420: room for the lists beside the editor. */
const PICTURE_EXTRA_HEIGHT = 160;

/** Both pages' screenshots side by side, as two windows on one screen, composed in a page of their own. */
async function saveSideBySide(browser: Browser, pages: Page[]): Promise<void> {
  const shots: string[] = [];
  for (const page of pages) {
    await page.setViewport({ width: 640, height: 420 + PICTURE_EXTRA_HEIGHT });
    await page.bringToFront();
    shots.push(Buffer.from(await page.screenshot()).toString('base64'));
  }
  const board = await browser.newPage();
  await board.setViewport({ width: 1310, height: 440 + PICTURE_EXTRA_HEIGHT });
  await board.setContent(
    `<body style="margin:0;padding:10px;background:#adb5bd;display:flex;gap:10px">${shots
      .map(
        (shot) =>
          `<img src="data:image/png;base64,${shot}" style="width:640px;height:${420 + PICTURE_EXTRA_HEIGHT}px;box-shadow:0 1px 4px #495057">`,
      )
      .join('')}</body>`,
  );
  const picture = await board.screenshot();
  await board.close();
  const out = join(PROJECT_ROOT, '.cache', 'screenshots');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'editor-example.png'), picture);
  if (process.env.UPDATE_SCREENSHOT === '1') writeFileSync(join(PROJECT_ROOT, 'docs', 'editor-example.png'), picture);
}
