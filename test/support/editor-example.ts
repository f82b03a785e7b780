/**
 * The example application's server (examples/editor) started by its own command, `npm start` (build, then the
 * server), for the tests that drive it: test/browser/*.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './local-stack-process';
import { WAIT_CEILING_MS } from './wait';

export const EXAMPLE_DIR = join(PROJECT_ROOT, 'examples', 'editor');

export interface ExampleServer {
  child: ChildProcess;
  url: string;
  output(): string;
}

/** `npm start` in examples/editor, as its README says, in a process group of its own; resolves with its address. */
export async function startExample(env: Record<string, string>): Promise<ExampleServer> {
  if (!existsSync(join(EXAMPLE_DIR, 'node_modules', '@tiptap', 'core'))) {
    throw new Error(
      "The example's dependencies are not installed: run `npm ci --prefix examples/editor` (bash .ci/run does).",
    );
  }
  const child = spawn('npm', ['start', '--silent'], {
    cwd: EXAMPLE_DIR,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const append = (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-8000));
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`The example printed no address within ${WAIT_CEILING_MS} ms:\n${tail}`)),
      WAIT_CEILING_MS,
    );
    child.stdout?.on('data', () => {
      const match = /Editor example at (http:\/\/\S+)/.exec(tail);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`The example exited (code ${code}) before it was ready:\n${tail}`));
    });
  });
  return { child, url, output: () => tail };
}

export async function stopExample(example: ExampleServer | undefined): Promise<void> {
  const { child } = example ?? {};
  if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid, 'SIGTERM');
  await exited;
}
