/**
 * e2e tier: starts the local stack through the same command as `npm start` (a separate tsx process, in memory)
 * and hands its address to the tests as E2E_BASE_URL (workers inherit the environment set here).
 */
import { spawnLocalStack, type LocalStackProcess } from './local-stack-process';

/** Shared with the teardown, which runs in this same process. */
export const STACK_KEY = Symbol.for('collab.e2e.localStack');

type GlobalWithStack = typeof globalThis & { [STACK_KEY]?: LocalStackProcess };

export default async function globalSetup(): Promise<void> {
  // A generous limit so the e2e files can create workspaces freely; a rate-limit test starts its own stack.
  const stack = await spawnLocalStack({ env: { WORKSPACE_CREATE_LIMIT_PER_HOUR: '1000' } });
  (globalThis as GlobalWithStack)[STACK_KEY] = stack;
  // If jest leaves without running the teardown, the stack must not outlive it.
  process.once('exit', () => stack.child.kill('SIGTERM'));
  process.env.E2E_BASE_URL = stack.baseUrl;
}

export function takeLocalStack(): LocalStackProcess | undefined {
  const holder = globalThis as GlobalWithStack;
  const stack = holder[STACK_KEY];
  delete holder[STACK_KEY];
  return stack;
}
