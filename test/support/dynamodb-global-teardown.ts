/** connected tier: stops the DynamoDB Local, the fake AI providers and removes the keys folder that the setup started, nothing else. */
import { rmSync } from 'node:fs';
import { takeStartedResources } from './dynamodb-global-setup';

export default async function globalTeardown(): Promise<void> {
  const started = takeStartedResources();
  if (started.dynamodb !== undefined) {
    await started.dynamodb.stop();
    delete process.env.DYNAMODB_ENDPOINT;
  }
  if (started.aiProviders !== undefined) {
    await started.aiProviders.stop();
    delete process.env.FAKE_AI_PROVIDERS_URL;
  }
  if (started.keysDir !== undefined) {
    rmSync(started.keysDir, { recursive: true, force: true });
    delete process.env.LOCAL_KEYS_FILE;
  }
}
