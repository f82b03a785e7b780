/**
 * `npm start`: runs the whole backend on this machine (DynamoDB Local, the table, every route on
 * http://127.0.0.1:3000). Prints one readiness line to stdout when it serves; tests wait for exactly that line.
 * Everything it starts listens on 127.0.0.1 only, and what it creates under DATA_DIR is for its owner only (docs/operating.md,
 * "Security of the local stack").
 *
 *   --in-memory                 keep nothing (database in memory, keys in a temporary folder)
 *   PORT                        gateway port (default 3000; 0 = any free port)
 *   DATA_DIR                    where data and keys persist (default <project>/.data)
 *   DYNAMODB_PORT               DynamoDB Local's port (default: a free port)
 *   TABLE_NAME                  default collab-local
 *   WORKSPACE_CREATE_LIMIT_PER_HOUR, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GEMINI_BASE_URL, AI_TIMEOUT_MS and the
 *   other handler settings are read by the handlers themselves (they run in this process); checked at start.
 */
// Only types and the stop-request watch load before main(): see the first lines of main().
import type { LocalStack, LocalStackOptions } from '../local/local-stack';
import { watchStopRequests } from '../local/stop-requests';

/**
 * From the first stop request to exit (STOP_DEADLINE_SECONDS, default 9): what has not stopped by then is cut short
 * (process.exit, whose handlers SIGKILL DynamoDB Local), so a process manager can count on the stack being gone
 * within 10 s of its signal (Docker's default grace). An idle stack stops in about a second; the time is for what live
 * clients sent just before the stop, which is stored before the stack goes (decisions §13 "Nothing lost"): a burst
 * of keystrokes is handled a message at a time, and on a busy machine 4 s was seen to cut one short.
 */
const STOP_DEADLINE_MS = stopDeadlineMs(process.env.STOP_DEADLINE_SECONDS);

function stopDeadlineMs(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 9_000;
  const seconds = Number(raw);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 300)
    throw new Error(`STOP_DEADLINE_SECONDS must be a whole number of seconds from 1 to 300, got "${raw}".`);
  return seconds * 1000;
}

const USAGE = 'Usage: npm start [-- --in-memory]';

function optionsFromCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  defaultPort: number,
): LocalStackOptions {
  const unknown = argv.filter((arg) => arg !== '--in-memory');
  if (unknown.length > 0) throw new UsageError(`Unknown argument ${unknown[0]}. ${USAGE}`);
  return {
    inMemory: argv.includes('--in-memory'),
    port: portFromEnv(env, 'PORT') ?? defaultPort,
    dynamodbPort: portFromEnv(env, 'DYNAMODB_PORT'),
    dataDir: nonEmpty(env.DATA_DIR),
    tableName: nonEmpty(env.TABLE_NAME),
  };
}

class UsageError extends Error {}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function portFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`${name} must be a port number between 0 and 65535, got "${raw}".`);
  }
  return port;
}

async function main(): Promise<void> {
  const abort = new AbortController();
  let stack: LocalStack | undefined;

  const stop = async (reason: string): Promise<void> => {
    console.error(`Local stack: ${reason}, stopping.`);
    abort.abort();
    setTimeout(() => {
      console.error(
        `Local stack: not stopped within ${STOP_DEADLINE_MS / 1000} s; killing DynamoDB Local and leaving.`,
      );
      process.exit(0);
    }, STOP_DEADLINE_MS);
    // During startup there is no stack yet: the code below sees the abort and stops what was started.
    if (stack !== undefined) {
      await stack.stop();
      process.exit(0);
    }
  };
  // First of all, before the stack's modules load: a signal during startup must find its handler installed.
  watchStopRequests({
    onStop: (reason) => void stop(reason),
    // A second Ctrl-C: leave now; the exit handlers still kill DynamoDB Local.
    onRepeat: () => process.exit(130),
  });

  const { DEFAULT_PORT, startLocalStack } = await import('../local/local-stack');
  const { JavaRequirementError } = await import('../local/dynamodb-local');
  const reportStartupFailure = (error: unknown): void => {
    // Expected problems get their one-sentence message; anything else keeps its stack for debugging.
    if (error instanceof JavaRequirementError || error instanceof UsageError) console.error(error.message);
    else console.error('Local stack failed to start:', error);
  };
  // Asked to stop while the modules loaded: nothing was started yet.
  if (abort.signal.aborted) process.exit(0);

  try {
    const options = optionsFromCommandLine(process.argv.slice(2), process.env, DEFAULT_PORT);
    stack = await startLocalStack({ ...options, signal: abort.signal });
  } catch (error) {
    if (abort.signal.aborted) process.exit(0);
    reportStartupFailure(error);
    process.exit(1);
  }
  if (abort.signal.aborted) {
    await stack.stop();
    process.exit(0);
  }
  process.stdout.write(`Local stack ready at ${stack.baseUrl}\n`);
}

void main();
