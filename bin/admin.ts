/**
 * Operator CLI (`npm run admin -- <command>`):
 *
 *   production-key --workspace <workspaceId> [--name <apiKeyName>]   issue a production key (puts the workspace
 *                                                                      on the paid plan); prints the key id
 *   workspaces --email <email> [--json]                                list the workspaces an email owns
 *   rotate-page-token-key                                              give the page-token key a new value; the
 *                                                                      old one keeps verifying until the next rotation
 *
 * Target: with TABLE_NAME in the environment it works on that table (AWS: also KMS_KEY_ARN for the key's token,
 * credentials and region from the usual AWS environment). Without it, it uses the running local stack, found
 * through the state file `npm start` writes under DATA_DIR (default .data/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const USAGE = `Usage:
  npm run admin -- production-key --workspace <workspaceId> [--name <apiKeyName>]
  npm run admin -- workspaces --email <email> [--json]
  npm run admin -- rotate-page-token-key`;

interface LocalStackState {
  tableName: string;
  dynamodbEndpoint: string;
  keysFile: string;
}

/** Points the service modules at the local stack unless TABLE_NAME already names a table. */
function configureTarget(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  if (process.env.TABLE_NAME) return;
  const stateFile = join(resolve(process.env.DATA_DIR ?? join(__dirname, '..', '.data')), 'local-stack.json');
  if (!existsSync(stateFile)) {
    throw new Error(`No running local stack found (${stateFile} is missing): run \`npm start\`, or set TABLE_NAME to use a table in AWS.`);
  }
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as LocalStackState;
  process.env.TABLE_NAME = state.tableName;
  process.env.DYNAMODB_ENDPOINT = state.dynamodbEndpoint;
  process.env.LOCAL_KEYS_FILE = state.keysFile;
  process.env.AWS_REGION ??= 'local';
}

async function productionKey(workspaceId: string, apiKeyName: string): Promise<void> {
  const { issueApiKey } = await import('../shared/domain/credentials');
  const { apiKey } = await issueApiKey({ workspaceId, apiKeyName, type: 'production', createAuthToken: true });
  console.log(apiKey.id);
  console.error(`Issued production key ${apiKey.id} to ${workspaceId}; read its token with /v2/workspace/authtokens/get.`);
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

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      workspace: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      json: { type: 'boolean', default: false },
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
  throw new Error(USAGE);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // Service errors (unknown workspace) and usage errors are the operator's to read; nothing else is printed.
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
