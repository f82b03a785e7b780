/**
 * e2e tier: starts the fake AI providers and the local stack through the same command as `npm start` (a separate
 * `node --import tsx` process, in memory, its AI base URLs pointed at the fake), and hands both addresses to the tests as
 * E2E_BASE_URL and E2E_FAKE_AI_PROVIDERS_URL (workers inherit the environment set here). Every stack runs its
 * routes under the grant check (local/grant-check.ts) and reports violations to GRANT_CHECK_REPORT.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAiProviders, fakeBaseUrlEnvironment } from './fake-ai-providers';
import { spawnLocalStack, type LocalStackProcess } from './local-stack-process';

/** Shared with the teardown, which runs in this same process. */
export const STACK_KEY = Symbol.for('collab.e2e.localStack');
const AI_KEY = Symbol.for('collab.e2e.fakeAiProviders');

type GlobalWithStack = typeof globalThis & { [STACK_KEY]?: LocalStackProcess; [AI_KEY]?: FakeAiProviders };

export default async function globalSetup(): Promise<void> {
  // A generous limit so the e2e files can create workspaces freely; a rate-limit test starts its own stack.
  // Its own DATA_DIR, so the state file for the operator CLI never touches a developer's running stack.
  const dataDir = mkdtempSync(join(tmpdir(), 'collab-e2e-'));
  process.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
  // Every local stack of the run (this one, and those single tests start) reports grant-check violations here;
  // the teardown fails the run on any.
  process.env.GRANT_CHECK_REPORT = join(dataDir, 'grant-check-violations.jsonl');
  const aiProviders = await FakeAiProviders.start();
  (globalThis as GlobalWithStack)[AI_KEY] = aiProviders;
  process.env.E2E_FAKE_AI_PROVIDERS_URL = aiProviders.url;
  const stack = await spawnLocalStack({
    // LIVE_ACCESS_CHECK_SECONDS: a live connection's next message checks its access after 1 s, so revocation tests wait seconds, not half a minute.
    env: {
      WORKSPACE_CREATE_LIMIT_PER_HOUR: '1000',
      DATA_DIR: dataDir,
      ...fakeBaseUrlEnvironment(aiProviders.url),
      AI_TIMEOUT_MS: '5000',
      LIVE_ACCESS_CHECK_SECONDS: '1',
    },
  }).catch(async (error: unknown) => {
    await takeFakeAiProviders()?.stop();
    throw error;
  });
  process.env.E2E_DATA_DIR = dataDir;
  (globalThis as GlobalWithStack)[STACK_KEY] = stack;
  // If jest leaves without running the teardown, the stack must not outlive it.
  process.once('exit', () => stack.child.kill('SIGTERM'));
  process.env.E2E_BASE_URL = stack.baseUrl;
}

export function takeFakeAiProviders(): FakeAiProviders | undefined {
  const holder = globalThis as GlobalWithStack;
  const fake = holder[AI_KEY];
  delete holder[AI_KEY];
  return fake;
}

export function takeLocalStack(): LocalStackProcess | undefined {
  const holder = globalThis as GlobalWithStack;
  const stack = holder[STACK_KEY];
  delete holder[STACK_KEY];
  return stack;
}
