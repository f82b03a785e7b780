/**
 * `npm start`: runs the whole backend on this machine (DynamoDB Local, the table, every route on
 * http://127.0.0.1:3000). Prints one readiness line to stdout when it serves; tests wait for exactly that line.
 * Everything it starts listens on 127.0.0.1 only, and what it creates under DATA_DIR is for its owner only (README,
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
import { JavaRequirementError } from './lib/dynamodb-local';
import { DEFAULT_PORT, startLocalStack, type LocalStack, type LocalStackOptions } from './lib/local-stack';

const USAGE = 'Usage: npm start [-- --in-memory]';

function optionsFromCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): LocalStackOptions {
  const unknown = argv.filter((arg) => arg !== '--in-memory');
  if (unknown.length > 0) throw new UsageError(`Unknown argument ${unknown[0]}. ${USAGE}`);
  return {
    inMemory: argv.includes('--in-memory'),
    port: portFromEnv(env, 'PORT') ?? DEFAULT_PORT,
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

function reportStartupFailure(error: unknown): void {
  // Expected problems get their one-sentence message; anything else keeps its stack for debugging.
  if (error instanceof JavaRequirementError || error instanceof UsageError) console.error(error.message);
  else console.error('Local stack failed to start:', error);
}

async function main(): Promise<void> {
  const abort = new AbortController();
  let stack: LocalStack | undefined;
  let stopping = false;

  const shutdown = async (): Promise<void> => {
    if (stopping) {
      // A second Ctrl-C: leave now; the exit handlers still kill DynamoDB Local.
      process.exit(130);
    }
    stopping = true;
    abort.abort();
    // During startup there is no stack yet: main() sees the abort and stops what was started.
    if (stack !== undefined) {
      await stack.stop();
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());

  try {
    stack = await startLocalStack({ ...optionsFromCommandLine(process.argv.slice(2), process.env), signal: abort.signal });
  } catch (error) {
    if (stopping) process.exit(0);
    reportStartupFailure(error);
    process.exit(1);
  }
  if (stopping) {
    await stack.stop();
    process.exit(0);
  }
  process.stdout.write(`Local stack ready at ${stack.baseUrl}\n`);
}

void main();
