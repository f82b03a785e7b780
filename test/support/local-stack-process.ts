/**
 * Runs `bin/local.ts` the way `npm start` does (`node --import tsx`, a separate process) for the e2e tier, and checks
 * afterwards that no DynamoDB Local process of that run is left.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { isDynamoDbLocalCommandLine, pickFreePort } from '../../local/dynamodb-local';
import { WAIT_CEILING_MS } from './wait';

export const PROJECT_ROOT = resolve(__dirname, '..', '..');
const READY_LINE = /^Local stack ready at (http:\/\/127\.0\.0\.1:\d+)$/m;
const OUTPUT_TAIL_CHARS = 8_000;

export interface LocalStackProcess {
  child: ChildProcess;
  baseUrl: string;
  dynamodbPort: number;
  /** The tail of the child's stdout and stderr, for error messages. */
  output(): string;
}

export interface SpawnLocalStackOptions {
  args?: readonly string[];
  /** Added to the inherited environment. */
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /** DynamoDB Local's port; a free one is picked when omitted. */
  dynamodbPort?: number;
  /** Runs the stack in a process group of its own, so that `killProcessGroup(child.pid)` kills it as a crash would. */
  detached?: boolean;
}

/**
 * Spawns `node --import tsx bin/local.ts` with PORT=0 and a known DYNAMODB_PORT (so the Java process can be found later) and
 * resolves once the readiness line is printed; rejects with the child's output when it exits or times out first.
 */
export async function spawnLocalStack(options: SpawnLocalStackOptions = {}): Promise<LocalStackProcess> {
  const launched = await launchLocalStack(options);
  try {
    const baseUrl = await launched.ready;
    return { child: launched.child, baseUrl, dynamodbPort: launched.dynamodbPort, output: launched.output };
  } catch (error) {
    await stopLocalStackProcess(launched.child);
    throw error;
  }
}

export interface LaunchedLocalStack extends Omit<LocalStackProcess, 'baseUrl'> {
  /** The base URL once the readiness line is printed; rejects when the child exits or times out first. */
  ready: Promise<string>;
}

/** Spawns the stack without waiting for it, for tests of what happens during startup. */
export async function launchLocalStack(options: SpawnLocalStackOptions = {}): Promise<LaunchedLocalStack> {
  const dynamodbPort = options.dynamodbPort ?? (await pickFreePort());
  // The command of `npm start` without npm. Not the `tsx` command: it runs node as a second process and relays
  // signals to it through a 30 ms handshake, which on a busy machine times out and ends in SIGKILL and exit 143.
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts', ...(options.args ?? ['--in-memory'])], {
    cwd: PROJECT_ROOT,
    env: childEnvironment({ PORT: '0', DYNAMODB_PORT: String(dynamodbPort), ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  const output = captureOutput(child);
  const ready = waitForReadyLine(child, output, options.readyTimeoutMs ?? WAIT_CEILING_MS, 'bin/local.ts');
  // Callers that stop the child before it is ready do not care about this rejection.
  ready.catch(() => undefined);
  return { child, dynamodbPort, output, ready };
}

function captureOutput(child: ChildProcess): () => string {
  // Both pipes are read for the child's whole life: a full pipe would block the handlers' logging.
  let tail = '';
  const append = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => tail;
}

export interface NpmStartProcess {
  child: ChildProcess;
  /** npm's pid, and the process group of everything the run starts (npm, node, DynamoDB Local's java, esbuild). */
  pid: number;
  /** The base URL once the readiness line is printed; rejects when npm exits or times out first. */
  ready: Promise<string>;
  exited: Promise<ExitStatus>;
  output(): string;
}

/**
 * Runs the real `npm start` as a process manager does: in a session of its own (no terminal, so no Ctrl-C signals
 * its whole process group), to be signalled by its pid alone. Whatever the run starts stays in that process group
 * (nothing in it calls setsid), which is how `processGroupMembers` finds what is left of it.
 */
export function launchNpmStart(options: { env: Record<string, string>; readyTimeoutMs: number }): NpmStartProcess {
  const child = spawn('npm', ['start'], {
    cwd: PROJECT_ROOT,
    env: childEnvironment(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = captureOutput(child);
  const exited = new Promise<ExitStatus>((resolveExit) =>
    child.once('exit', (code, signal) => resolveExit({ code, signal })),
  );
  const ready = waitForReadyLine(child, output, options.readyTimeoutMs, 'npm start');
  ready.catch(() => undefined);
  if (child.pid === undefined) throw new Error('npm start could not be spawned.');
  return { child, pid: child.pid, ready, exited, output };
}

/** The live processes (not zombies) of process group `pgid`, as "pid command line". */
export function processGroupMembers(pgid: number): string[] {
  const lines = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' }).split('\n');
  return lines
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && stat !== undefined && !stat.startsWith('Z'))
    .map(([pid, , , ...args]) => `${pid} ${args.join(' ')}`);
}

/** SIGKILL to every process of the group; for cleanup after a failed test, and for the kill -9 test itself. */
export function killProcessGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolveListening) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolveListening(true);
    });
    socket.once('error', () => resolveListening(false));
  });
}

/**
 * The inherited environment minus what another tier's setup may have set for its own DynamoDB Local: the stack
 * must use the database and keys it starts itself.
 */
function childEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  for (const name of ['DYNAMODB_ENDPOINT', 'LOCAL_KEYS_FILE', 'TABLE_NAME', 'DATA_DIR']) delete env[name];
  return { ...env, ...extra };
}

function waitForReadyLine(
  child: ChildProcess,
  output: () => string,
  timeoutMs: number,
  command: string,
): Promise<string> {
  return new Promise((resolveReady, reject) => {
    const finish = (error?: Error, baseUrl?: string): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error !== undefined) reject(error);
      else if (baseUrl !== undefined) resolveReady(baseUrl);
    };
    const onData = (): void => {
      const match = READY_LINE.exec(output());
      if (match !== null) finish(undefined, match[1]);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      finish(new Error(`${command} exited before it was ready (code ${code}, signal ${signal}):\n${output()}`));
    };
    const timer = setTimeout(
      () => finish(new Error(`${command} printed no readiness line within ${timeoutMs} ms:\n${output()}`)),
      timeoutMs,
    );
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves with how the child ended. */
export function stopLocalStackProcess(child: ChildProcess, graceMs = 20_000): Promise<ExitStatus> {
  return new Promise((resolveStop) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolveStop({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolveStop({ code, signal });
    });
    child.kill('SIGTERM');
  });
}

/** Pids of DynamoDB Local processes listening on `port` (found by their command line). */
export function dynamoDbLocalPids(port: number): number[] {
  const lines = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n');
  return lines
    .filter((line) => isDynamoDbLocalCommandLine(line, port))
    .map((line) => Number.parseInt(line.trim(), 10))
    .filter((pid) => Number.isInteger(pid));
}
