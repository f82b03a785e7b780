/**
 * connected tier: one keys file and the fake AI providers for the whole run, and DynamoDB Local fetched for the
 * files, each of which starts its own in memory (test/support/connected-environment.ts). Everything is handed to the
 * test workers through the environment, which they inherit from this process. When DYNAMODB_ENDPOINT is already set
 * (the developer started one), every file uses that instance and none is started.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDynamoDbLocal, silenceNodeVersionWarning } from '../../local/dynamodb-local';
import { ensureLocalKeysFile } from '../../shared/crypto/local-keys';
import { PER_FILE_DYNAMODB_LOCAL } from './connected-environment';
import { FakeAiProviders, fakeBaseUrlEnvironment } from './fake-ai-providers';

/** What this setup started, for the teardown (same process): only that is stopped or removed. */
export interface StartedResources {
  keysDir?: string;
  aiProviders?: FakeAiProviders;
}

const RESOURCES_KEY = Symbol.for('collab.connected.dynamodbLocal');
type GlobalWithResources = typeof globalThis & { [RESOURCES_KEY]?: StartedResources };

export default async function globalSetup(): Promise<void> {
  silenceNodeVersionWarning();
  process.env.AWS_REGION ??= 'local';
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

  const started: StartedResources = {};
  (globalThis as GlobalWithResources)[RESOURCES_KEY] = started;

  if (isUnset(process.env.LOCAL_KEYS_FILE)) {
    started.keysDir = mkdtempSync(join(tmpdir(), 'collab-test-keys-'));
    const keysDir = started.keysDir;
    // Removed by the teardown; this covers a run that ends without one.
    process.once('exit', () => rmSync(keysDir, { recursive: true, force: true }));
    const file = join(started.keysDir, 'local-keys.json');
    ensureLocalKeysFile(file);
    process.env.LOCAL_KEYS_FILE = file;
  }

  // Always this run's fake, never a provider a developer's environment points at; a timeout short enough that the
  // hang tests take a couple of seconds rather than 25.
  started.aiProviders = await FakeAiProviders.start();
  Object.assign(process.env, fakeBaseUrlEnvironment(started.aiProviders.url), {
    FAKE_AI_PROVIDERS_URL: started.aiProviders.url,
    AI_TIMEOUT_MS: '2000',
  });

  // Each file starts a DynamoDB Local of its own (connected-environment.ts says why); the jar is fetched once, here.
  if (isUnset(process.env.DYNAMODB_ENDPOINT)) process.env[PER_FILE_DYNAMODB_LOCAL] = await ensureDynamoDbLocal();
}

function isUnset(value: string | undefined): boolean {
  return value === undefined || value.trim() === '';
}

export function takeStartedResources(): StartedResources {
  const holder = globalThis as GlobalWithResources;
  const started = holder[RESOURCES_KEY] ?? {};
  delete holder[RESOURCES_KEY];
  return started;
}
