/**
 * The README's quick start, run as a reader runs it: its shell block pasted into bash (with `set -euo pipefail`,
 * so any failing step stops it) against a fresh local stack, then the runnable examples of docs/api.md and
 * docs/live-sync.md (§1, and its Node.js client under Node 20), which go on from where the quick start leaves the
 * shell. Reading the Markdown here is a test of the docs; no service code reads Markdown.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkResponse } from '../support/contract';
import { baseUrl } from '../support/http';
import { eventually } from '../support/wait';

const ROOT = join(__dirname, '..', '..');

/** The `sh` blocks of a Markdown file between two markers, in order. */
function shellBlocks(file: string, begin: string, end: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file} has no ${begin} ... ${end} section.`);
  const blocks = [...text.slice(from, to).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
  if (blocks.length === 0) throw new Error(`${file} has no sh block between ${begin} and ${end}.`);
  return blocks;
}

const quickStart = () => shellBlocks('README.md', '<!-- quick-start:begin -->', '<!-- quick-start:end -->');
const apiExamples = () => shellBlocks('docs/api.md', '<!-- examples:begin -->', '<!-- examples:end -->');
const liveSyncAuthorize = () =>
  shellBlocks('docs/live-sync.md', '<!-- live-sync-1:begin -->', '<!-- live-sync-1:end -->');
const liveSyncNodeRun = () =>
  shellBlocks('docs/live-sync.md', '<!-- live-sync-node:begin -->', '<!-- live-sync-node:end -->');

/** The first `js` block after a heading of docs/live-sync.md. */
function liveSyncJs(heading: string): string {
  const text = readFileSync(join(ROOT, 'docs', 'live-sync.md'), 'utf8');
  const at = text.indexOf(`\n${heading}\n`);
  const block = at < 0 ? null : /^```js\n([\s\S]*?)^```$/m.exec(text.slice(at));
  if (block === null) throw new Error(`docs/live-sync.md has no js block after "${heading}".`);
  return block[1] as string;
}

/** The paths the script calls, in order: each call (`post`, `as_workspace`, `as_key`) prints one answer. */
function calledPaths(script: string): string[] {
  return [...script.matchAll(/^\s*(?:[A-Z_]+=\$\()?(?:post|as_workspace|as_key) (\/v[12]\/\S+)/gm)].map(
    (match) => match[1] as string,
  );
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the script with bash as a reader's shell would, BASE pointed at the e2e tier's local stack. */
function runInBash(script: string, options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, BASE: baseUrl() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Each printed answer, parsed, with the path that answered it; every answer must be a success of that operation. */
function expectEverySuccess(run: Run, paths: string[]): void {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const answers = run.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, any>);
  expect(answers).toHaveLength(paths.length);
  answers.forEach((answer, i) => {
    const path = paths[i] as string;
    expect({ path, error: answer.error }).toEqual({ path, error: undefined });
    // Ask AI and Suggest Decision answer their own `result`; every other operation the success envelope.
    if (!['/v2/rewriter/ask-ai', '/v2/memory/suggest'].includes(path))
      expect({ path, status: answer.result?.status }).toEqual({ path, status: 'success' });
    checkResponse(path, 200, answer);
  });
}

describe("the README's quick start", () => {
  it('runs as pasted against a fresh local stack, every step answered with a success', async () => {
    const script = quickStart().join('\n');

    const run = await runInBash(script);

    expectEverySuccess(run, calledPaths(script));
  });

  it('leaves the shell ready for the examples of docs/api.md, which all succeed after it', async () => {
    const script = [...quickStart(), ...apiExamples()].join('\n');

    const run = await runInBash(script);

    expectEverySuccess(run, calledPaths(script));
  });

  it('leaves the shell ready for docs/live-sync.md §1, which authorizes a live session after creating what it needs', async () => {
    const script = [...quickStart(), ...liveSyncAuthorize()].join('\n');

    const run = await runInBash(script);

    expectEverySuccess(run, calledPaths(script));
    const session = JSON.parse(run.stdout.trim().split('\n').at(-1) as string).result.data;
    expect({ accessRole: session.accessRole, serverUrl: session.serverUrl, token: typeof session.token }).toEqual({
      accessRole: 'editor',
      serverUrl: `${baseUrl().replace(/^http/, 'ws')}/v2/crdt/live`,
      token: 'string',
    });
  });

  it("runs docs/live-sync.md's Node.js client as written, under Node 20 (no global WebSocket): its paragraph is stored", async () => {
    // The reader's folder: an ES module package with the script and a copy of the adapter. Under the project, so `ws`, `yjs` and `y-websocket`
    // resolve from its node_modules as from the reader's own.
    const cacheDir = join(ROOT, '.cache');
    mkdirSync(cacheDir, { recursive: true });
    const folder = mkdtempSync(join(cacheDir, 'live-sync-node-'));
    try {
      writeFileSync(join(folder, 'package.json'), '{ "private": true, "type": "module" }\n');
      writeFileSync(join(folder, 'live-client.js'), liveSyncJs('### Node.js'));
      copyFileSync(join(ROOT, 'clients', 'live-socket.js'), join(folder, 'live-socket.js'));
      // Node 22 and later: their global WebSocket off, as Node 20 has none.
      const env: Record<string, string> =
        typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'function'
          ? { NODE_OPTIONS: '--no-experimental-websocket' }
          : {};
      // Not from the docs: the credentials the shell ended with, to read the document back.
      const script = [
        ...quickStart(),
        ...liveSyncAuthorize(),
        ...liveSyncNodeRun(),
        'echo "{\\"apiKey\\":\\"$API_KEY\\",\\"authToken\\":\\"$AUTH_TOKEN\\"}"',
      ].join('\n');

      const run = await runInBash(script, { cwd: folder, env });

      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      const lines = run.stdout.trim().split('\n');
      expect(lines.at(-2)).toBe('<paragraph>Written from Node.</paragraph>');
      const key = JSON.parse(lines.at(-1) as string);
      const read = async () => {
        const response = await fetch(`${baseUrl()}/v2/crdt/get`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-service-api-key': key.apiKey,
            'x-service-auth-token': key.authToken,
          },
          body: JSON.stringify({ data: { organizationId: 'acme', documentId: 'launch-plan', editorId: 'body' } }),
        });
        return ((await response.json()) as any).result?.data?.[0]?.data as string | undefined;
      };
      expect(
        await eventually(read, (stored) => stored?.includes('Written from Node.') === true, {
          what: "the Node client's paragraph in /v2/crdt/get",
        }),
      ).toContain('<paragraph>Written from Node.</paragraph>');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
