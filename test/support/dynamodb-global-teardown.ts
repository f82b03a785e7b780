/** connected tier: stops the fake AI providers and removes the keys folder that the setup started, nothing else. */
import { rmSync } from 'node:fs';
import { PER_FILE_DYNAMODB_LOCAL } from './connected-environment';
import { takeStartedResources } from './dynamodb-global-setup';

export default async function globalTeardown(): Promise<void> {
  const started = takeStartedResources();
  delete process.env[PER_FILE_DYNAMODB_LOCAL];
  if (started.aiProviders !== undefined) {
    await started.aiProviders.stop();
    delete process.env.FAKE_AI_PROVIDERS_URL;
  }
  if (started.keysDir !== undefined) {
    rmSync(started.keysDir, { recursive: true, force: true });
    delete process.env.LOCAL_KEYS_FILE;
  }
}
