/**
 * The connected tier's test environment: Node's, plus a DynamoDB Local (in memory) started before the file's modules
 * load, or kept from an earlier file of the same worker (below), when dynamodb-global-setup.ts asks for one (it does
 * unless the developer's DYNAMODB_ENDPOINT names an instance to use).
 *
 * A file's table has a stream only when the file reads it. Such a file says so with the `@table-stream` pragma in its
 * first doc comment; this environment then sets TABLE_STREAM=on for create-table.ts. Every other file gets the same
 * table without its stream: nothing there reads the stream, and DynamoDB Local's stream records are what cost.
 * DynamoDB Local keeps every stream record for the life of the process, its tables' deleted or not, and each write
 * to a stream-enabled table gets slower with the records it holds (measured: the same 2,000 writes to a new table
 * took 1.8 s on a fresh instance and 27 s once seven deleted tables had left 14,000 records); and writing the records
 * is about a third of DynamoDB Local's CPU (the connected tier with every table streamed: 358 CPU seconds; with only
 * the 12 files that read a stream streamed: 227). A stream file that forgets the pragma fails: its stream poller
 * finds no stream on the table.
 *
 * So a worker keeps two instances:
 * - one for the files without a stream, for the worker's whole life (a table that has no stream leaves nothing behind
 *   once deleted): one JVM start per worker instead of one per three files;
 * - one for the stream files, replaced every STREAM_FILES_PER_INSTANCE files, so a file meets at most the records of
 *   the stream files just before it in that worker.
 *
 * The instance's port is picked here and the endpoint handed to the file through its own process.env, which Jest
 * copies per file, once java has bound it: no other file or process can take it in between.
 *
 * A worker's instances end with it (SIGKILL on the worker's exit, and Linux's parent-death signal). In Jest's own
 * process (one file, or --runInBand) every file stops its instance, so nothing outlives the run.
 */
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import type { Socket } from 'node:net';
import { TestEnvironment as NodeEnvironment } from 'jest-environment-node';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';

/** Set by dynamodb-global-setup.ts: DynamoDB Local's folder (ensureDynamoDbLocal), when each file starts its own. */
export const PER_FILE_DYNAMODB_LOCAL = 'DYNAMODB_LOCAL_PER_FILE';

/** The docblock pragma of a file that reads its table's stream, and what it sets for create-table.ts. */
const STREAM_PRAGMA = 'table-stream';

/** Stream files one instance serves in a worker before the next stream file gets a fresh one. */
const STREAM_FILES_PER_INSTANCE = 3;

type Kind = 'plain' | 'stream';

/** The worker's instances between its files (this module is loaded once per worker), and the files each has served. */
const kept: Record<Kind, { instance: DynamoDbLocal; files: number } | undefined> = {
  plain: undefined,
  stream: undefined,
};
const filesPerInstance: Record<Kind, number> = { plain: Infinity, stream: STREAM_FILES_PER_INSTANCE };

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
  private readonly kind: Kind;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    this.kind = STREAM_PRAGMA in context.docblockPragmas ? 'stream' : 'plain';
  }

  override async setup(): Promise<void> {
    await super.setup();
    const env = (this.global.process as NodeJS.Process).env;
    if (this.kind === 'stream') env.TABLE_STREAM = 'on';
    const emulatorDir = process.env[PER_FILE_DYNAMODB_LOCAL];
    if (emulatorDir === undefined || emulatorDir === '') return;
    const previous = kept[this.kind];
    const reused =
      previous !== undefined &&
      previous.instance.process.exitCode === null &&
      previous.instance.process.signalCode === null
        ? previous
        : undefined;
    kept[this.kind] = undefined;
    this.dynamodbLocal = reused?.instance ?? (await startDynamoDbLocal({ inMemory: true, emulatorDir }));
    const files = (reused?.files ?? 0) + 1;
    if (inWorker() && files < filesPerInstance[this.kind]) {
      kept[this.kind] = { instance: this.dynamodbLocal, files };
      unref(this.dynamodbLocal);
    }
    env.DYNAMODB_ENDPOINT = this.dynamodbLocal.endpoint;
  }

  override async teardown(): Promise<void> {
    const instance = this.dynamodbLocal;
    this.dynamodbLocal = undefined;
    if (instance !== undefined && kept[this.kind]?.instance !== instance) await instance.stop();
    await super.teardown();
  }
}
