/**
 * The connected tier's test environment: Node's, plus a DynamoDB Local of the file's own (in memory), started before
 * the file's modules load and stopped after its last hook, when dynamodb-global-setup.ts asks for one (it does unless
 * the developer's DYNAMODB_ENDPOINT names an instance to use).
 *
 * Why not one DynamoDB Local for the whole run (as before issue 31 item 6): DynamoDB Local keeps every stream record
 * for the life of the process, its tables' deleted or not, and each write gets slower with the records it holds
 * (measured: the same 2,000 writes to a new table took 1.8 s on a fresh instance and 27 s once seven deleted tables
 * had left 14,000 records). Every connected file writes to a stream-enabled table, so a file's time depended on how
 * many files ran before it on the shared instance. A fresh instance costs about 1.6 s of CPU (C1 only, serial
 * collector: jest.config.js), and every file meets DynamoDB Local as a first file did.
 *
 * The instance's port is picked here and the endpoint handed to the file through its own process.env, which Jest
 * copies per file, once java has bound it: no other file or process can take it in between.
 */
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';

/** Set by dynamodb-global-setup.ts: DynamoDB Local's folder (ensureDynamoDbLocal), when each file starts its own. */
export const PER_FILE_DYNAMODB_LOCAL = 'DYNAMODB_LOCAL_PER_FILE';

export default class ConnectedEnvironment extends NodeEnvironment {
  private dynamodbLocal: DynamoDbLocal | undefined;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
  }

  override async setup(): Promise<void> {
    await super.setup();
    const emulatorDir = process.env[PER_FILE_DYNAMODB_LOCAL];
    if (emulatorDir === undefined || emulatorDir === '') return;
    this.dynamodbLocal = await startDynamoDbLocal({ inMemory: true, emulatorDir });
    (this.global.process as NodeJS.Process).env.DYNAMODB_ENDPOINT = this.dynamodbLocal.endpoint;
  }

  override async teardown(): Promise<void> {
    await this.dynamodbLocal?.stop();
    this.dynamodbLocal = undefined;
    await super.teardown();
  }
}
