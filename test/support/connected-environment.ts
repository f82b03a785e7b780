/**
 * The connected tier's test environment: Node's, plus a DynamoDB Local (in memory) started before the file's modules
 * load, fresh or kept from at most two files before it in the same worker (below), when dynamodb-global-setup.ts asks
 * for one (it does unless the developer's DYNAMODB_ENDPOINT names an instance to use).
 *
 * Why not one DynamoDB Local for the whole run (as before issue 31 item 6): DynamoDB Local keeps every stream record
 * for the life of the process, its tables' deleted or not, and each write gets slower with the records it holds
 * (measured: the same 2,000 writes to a new table took 1.8 s on a fresh instance and 27 s once seven deleted tables
 * had left 14,000 records). Every connected file writes to a stream-enabled table, so a file's time depended on how
 * many files ran before it on the shared instance. A fresh instance costs about 1.8 s of CPU (C1 only, serial
 * collector: jest.config.js).
 *
 * The instance's port is picked here and the endpoint handed to the file through its own process.env, which Jest
 * copies per file, once java has bound it: no other file or process can take it in between.
 *
 * In a Jest worker (a child process running one file after another) an instance serves FILES_PER_INSTANCE files in
 * turn, each on a table of its own, before the next file gets a fresh one: a third of the starts, while a file meets
 * at most the records of the two before it in that worker. The last instance of a worker ends with it (SIGKILL on
 * the worker's exit, and Linux's parent-death signal). In Jest's own process (one file, or --runInBand) every file
 * stops its instance, so nothing outlives the run.
 */
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import type { Socket } from 'node:net';
import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';

/** Set by dynamodb-global-setup.ts: DynamoDB Local's folder (ensureDynamoDbLocal), when each file starts its own. */
export const PER_FILE_DYNAMODB_LOCAL = 'DYNAMODB_LOCAL_PER_FILE';

/** Files one instance serves in a worker before the next file gets a fresh one. */
const FILES_PER_INSTANCE = 3;

/** The worker's instance between its files (this module is loaded once per worker), and the files it has served. */
let kept: { instance: DynamoDbLocal; files: number } | undefined;

/** A Jest worker is a child process that talks to Jest over IPC; Jest's own process (in band) is not. */
const inWorker = (): boolean => process.env.JEST_WORKER_ID !== undefined && typeof process.send === 'function';

/**
 * Lets the worker exit while a kept instance runs: its exit then kills java (startDynamoDbLocal's exit handler), where
 * an instance holding the worker open would have Jest force the worker out (SIGTERM, no exit handlers) instead.
 */
function unref(instance: DynamoDbLocal): void {
  instance.process.unref();
  for (const pipe of [instance.process.stdout, instance.process.stderr]) (pipe as Socket | null)?.unref();
}

export default class ConnectedEnvironment extends NodeEnvironment {
  private dynamodbLocal: DynamoDbLocal | undefined;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
  }

  override async setup(): Promise<void> {
    await super.setup();
    const emulatorDir = process.env[PER_FILE_DYNAMODB_LOCAL];
    if (emulatorDir === undefined || emulatorDir === '') return;
    const reused =
      kept !== undefined && kept.instance.process.exitCode === null && kept.instance.process.signalCode === null
        ? kept
        : undefined;
    kept = undefined;
    this.dynamodbLocal = reused?.instance ?? (await startDynamoDbLocal({ inMemory: true, emulatorDir }));
    const files = (reused?.files ?? 0) + 1;
    if (inWorker() && files < FILES_PER_INSTANCE) {
      kept = { instance: this.dynamodbLocal, files };
      unref(this.dynamodbLocal);
    }
    (this.global.process as NodeJS.Process).env.DYNAMODB_ENDPOINT = this.dynamodbLocal.endpoint;
  }

  override async teardown(): Promise<void> {
    const instance = this.dynamodbLocal;
    this.dynamodbLocal = undefined;
    if (instance !== undefined && kept?.instance !== instance) await instance.stop();
    await super.teardown();
  }
}
