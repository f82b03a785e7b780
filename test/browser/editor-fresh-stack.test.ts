/**
 * The example application's server (examples/editor) when the local stack it talks to starts afresh (`--in-memory`,
 * a new DATA_DIR): the service no longer knows the workspace and API key the example saved, and answers 403
 * PERMISSION_DENIED `Invalid API key.`. The example makes a new workspace and goes on, both when it starts with
 * such saved credentials and when the stack starts afresh under it while it runs. No browser: the page only asks
 * this server for sessions (`GET /session`), which is what is checked here.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pickFreePort } from '../../local/dynamodb-local';
import { startExample, stopExample, type ExampleServer } from '../support/editor-example';
import { spawnLocalStack, stopLocalStackProcess, type LocalStackProcess } from '../support/local-stack-process';

describe('the example editor when the local stack starts afresh', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'editor-fresh-'));
    dirs.push(dir);
    return dir;
  };
  const credentialsFile = join(tempDir(), 'credentials.json');
  let port: number;
  let stack: LocalStackProcess | undefined;
  let example: ExampleServer | undefined;

  /** A local stack on a new, empty data folder, always on the same port (the example's SERVICE_URL). */
  const startFreshStack = () =>
    spawnLocalStack({ args: [], env: { PORT: String(port), DATA_DIR: tempDir(), POWERTOOLS_LOG_LEVEL: 'ERROR' } });
  const sessionFor = async (userId: string) => {
    const response = await fetch(`${example?.url}/session?user=${userId}`);
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    port = await pickFreePort();
    stack = await startFreshStack();
  });

  afterAll(async () => {
    await stopExample(example);
    if (stack !== undefined) await stopLocalStackProcess(stack.child);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('starts with saved credentials the service no longer knows, on a new workspace', async () => {
    // What the example saved against an earlier stack: a workspace and key this one never had.
    writeFileSync(
      credentialsFile,
      JSON.stringify({
        serviceUrl: stack?.baseUrl,
        workspaceId: 'ws-gone',
        apiKey: 'key-gone',
        authToken: 'token-gone',
      }),
    );

    example = await startExample({
      SERVICE_URL: stack?.baseUrl as string,
      PORT: '0',
      CREDENTIALS_FILE: credentialsFile,
    });

    const session = await sessionFor('ann');
    expect({ status: session.status, role: session.body.accessRole, error: session.body.error }).toEqual({
      status: 200,
      role: 'editor',
      error: undefined,
    });
    expect(JSON.parse(readFileSync(credentialsFile, 'utf8')).apiKey).not.toBe('key-gone');
  });

  it('answers sessions again after the stack restarts afresh under it', async () => {
    // On its own too (the test before failed): an example that made its workspace on this stack.
    if (example === undefined) {
      rmSync(credentialsFile, { force: true });
      example = await startExample({
        SERVICE_URL: stack?.baseUrl as string,
        PORT: '0',
        CREDENTIALS_FILE: credentialsFile,
      });
    }
    expect((await sessionFor('ann')).status).toBe(200);
    const saved = JSON.parse(readFileSync(credentialsFile, 'utf8'));
    await stopLocalStackProcess((stack as LocalStackProcess).child);
    stack = undefined;
    stack = await startFreshStack();

    // Two pages asking at once share one new workspace.
    const sessions = await Promise.all([sessionFor('bob'), sessionFor('vic')]);

    expect(sessions.map(({ status, body }) => ({ status, role: body.accessRole, error: body.error }))).toEqual([
      { status: 200, role: 'editor', error: undefined },
      { status: 200, role: 'viewer', error: undefined },
    ]);
    expect(JSON.parse(readFileSync(credentialsFile, 'utf8')).apiKey).not.toBe(saved.apiKey);
    expect(example?.output()).toMatch(/no longer knows this example's credentials .*Invalid API key/);
  });
});
