/**
 * Runs `bin/local.ts` the way `npm start` does (tsx, a separate process) for the e2e tier, and checks afterwards
 * that no DynamoDB Local process of that run is left.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { isDynamoDbLocalCommandLine, pickFreePort } from '../../bin/lib/dynamodb-local';

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
}

/**
 * Spawns `tsx bin/local.ts` with PORT=0 and a known DYNAMODB_PORT (so the Java process can be found later) and
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
  const child = spawn(join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx'), ['bin/local.ts', ...(options.args ?? ['--in-memory'])], {
    cwd: PROJECT_ROOT,
    env: childEnvironment({ PORT: '0', DYNAMODB_PORT: String(dynamodbPort), ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Both pipes are read for the child's whole life: a full pipe would block the handlers' logging.
  let tail = '';
  const append = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const output = (): string => tail;
  const ready = waitForReadyLine(child, output, options.readyTimeoutMs ?? 60_000);
  // Callers that stop the child before it is ready do not care about this rejection.
  ready.catch(() => undefined);
  return { child, dynamodbPort, output, ready };
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

function waitForReadyLine(child: ChildProcess, output: () => string, timeoutMs: number): Promise<string> {
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
      finish(new Error(`bin/local.ts exited before it was ready (code ${code}, signal ${signal}):\n${output()}`));
    };
    const timer = setTimeout(
      () => finish(new Error(`bin/local.ts printed no readiness line within ${timeoutMs} ms:\n${output()}`)),
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
