/**
 * Operator CLI (`npm run admin -- <command>`):
 *
 *   production-key --workspace <workspaceId> [--name <apiKeyName>]   issue a production key (puts the workspace
 *                                                                      on the paid plan); prints the key id
 *   workspaces --email <email> [--json]                                list the workspaces an email owns
 *   rotate-page-token-key                                              give the page-token key a new value; the
 *                                                                      old one keeps verifying until the next rotation
 *   replay-dead-letters [--dry-run] [--consumer <id>]                  hand the stream changes a consumer gave up
 *                                                                      on to it again (docs/operating.md)
 *
 * Target: with TABLE_NAME in the environment it works on that table (AWS: also KMS_KEY_ARN for the key's token,
 * credentials and region from the usual AWS environment; replay-dead-letters also DELIVERY_QUEUE_URL). Without it,
 * it uses the running local stack, found through the state file `npm start` writes under DATA_DIR (default .data/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `Usage:
  npm run admin -- production-key --workspace <workspaceId> [--name <apiKeyName>]
  npm run admin -- workspaces --email <email> [--json]
  npm run admin -- rotate-page-token-key
  npm run admin -- replay-dead-letters [--dry-run] [--consumer <consumerId>]`;

interface LocalStackState {
  tableName: string;
  dynamodbEndpoint: string;
  keysFile: string;
  /** The file queue's folder (absent in a state file of an older stack: next to the keys file). */
  queueDir?: string;
}

/** Points the service modules at the local stack unless TABLE_NAME already names a table. */
function configureTarget(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  if (process.env.TABLE_NAME) return;
  const stateFile = join(resolve(process.env.DATA_DIR ?? join(__dirname, '..', '.data')), 'local-stack.json');
  if (!existsSync(stateFile)) {
    throw new Error(
      `No running local stack found (${stateFile} is missing): run \`npm start\`, or set TABLE_NAME to use a table in AWS.`,
    );
  }
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as LocalStackState;
  process.env.TABLE_NAME = state.tableName;
  process.env.DYNAMODB_ENDPOINT = state.dynamodbEndpoint;
  process.env.LOCAL_KEYS_FILE = state.keysFile;
  process.env.DELIVERY_QUEUE_DIR ??= state.queueDir ?? join(dirname(state.keysFile), 'queue');
  process.env.AWS_REGION ??= 'local';
}

async function productionKey(workspaceId: string, apiKeyName: string): Promise<void> {
  const { issueApiKey } = await import('../shared/domain/credentials');
  const { apiKey } = await issueApiKey({ workspaceId, apiKeyName, type: 'production', createAuthToken: true });
  console.log(apiKey.id);
  console.error(
    `Issued production key ${apiKey.id} to ${workspaceId}; read its token with /v2/workspace/authtokens/get.`,
  );
}

async function workspaces(email: string, json: boolean): Promise<void> {
  const { normalizeEmail } = await import('../shared/domain/owner-email');
  const { listWorkspacesByEmail } = await import('../shared/db/workspace');
  const owned = await listWorkspacesByEmail(normalizeEmail(email));
  if (json) {
    console.log(JSON.stringify(owned));
    return;
  }
  if (owned.length === 0) console.error(`No workspaces for ${email}.`);
  for (const workspace of owned) console.log(`${workspace.workspaceId}\t${workspace.workspaceName}`);
}

async function rotatePageTokenKey(): Promise<void> {
  const { PAGE_TOKEN_SECRET, rotateServerSecret } = await import('../shared/db/server-secret');
  await rotateServerSecret(PAGE_TOKEN_SECRET);
  console.error(
    'Rotated the page-token key. Warm functions sign with the new value within 5 minutes; tokens signed with the ' +
      'previous value stay valid until they expire (24 h). Rotate again after that to drop the previous value.',
  );
}

async function replayDeadLetters(dryRun: boolean, consumerId: string | undefined): Promise<void> {
  const { replayDeadLetters: replay } = await import('../shared/domain/stream/dead-letters');
  const { consumers: changesConsumers } = await import('../functions/workers/stream-changes');
  const { consumers: migrationConsumers } = await import('../functions/workers/document-migration');
  const { documentMigrationWorker, streamChangesWorker } = await import('../shared/workers');
  const outcomes = await replay(
    [
      { worker: streamChangesWorker, consumers: changesConsumers },
      { worker: documentMigrationWorker, consumers: migrationConsumers },
    ],
    {
      dryRun,
      ...(consumerId === undefined ? {} : { consumerId }),
      report: ({ letter, status, error }) =>
        console.log(
          [
            status,
            letter.readerId,
            letter.consumerId,
            letter.eventId,
            new Date(letter.failedAt).toISOString(),
            `failures=${letter.failures}`,
            error ?? letter.error,
          ].join('\t'),
        ),
    },
  );
  const failed = outcomes.filter((outcome) => outcome.status === 'failed').length;
  console.error(
    dryRun
      ? `${outcomes.length} dead letter(s).`
      : `Replayed ${outcomes.length - failed} dead letter(s); ${failed} failed again and are kept (see the last column).`,
  );
  if (failed > 0) process.exitCode = 1;
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      json: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      consumer: { type: 'string' },
    },
  });
  const [command] = positionals;
  if (command === 'production-key' && values.workspace) {
    configureTarget();
    return productionKey(values.workspace, values.name ?? 'Production API Key');
  }
  if (command === 'workspaces' && values.email) {
    configureTarget();
    return workspaces(values.email, values.json === true);
  }
  if (command === 'rotate-page-token-key') {
    configureTarget();
    return rotatePageTokenKey();
  }
  if (command === 'replay-dead-letters') {
    configureTarget();
    return replayDeadLetters(values['dry-run'] === true, values.consumer);
  }
  throw new Error(USAGE);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // Service errors (unknown workspace) and usage errors are the operator's to read; nothing else is printed.
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
