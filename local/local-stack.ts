/**
 * The local stack: DynamoDB Local, the table from the shared definition, the local keys, and every route of the
 * route table served over HTTP by the local gateway. `bin/local.ts` (`npm start`) is the command around it.
 */
import { appendFileSync, rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { ensureLocalKeysFile } from '../shared/crypto/local-keys';
import { createTableInput } from '../shared/db/table-definition';
import { NO_GRANTS } from '../shared/grants';
import { findRoute, socketRoutes, type SocketRouteKey } from '../shared/routes';
import { deliveryQueueWorker, scheduledWorkers, streamChangesWorker, workers, type Worker } from '../shared/workers';
import { streamHandler, type ConsumersOf } from '../shared/domain/stream/dispatch';
import { runDeployTasks } from './deploy-tasks';
import { checkJava, ensureDynamoDbLocal, silenceNodeVersionWarning, startDynamoDbLocal } from './dynamodb-local';
import { createGateway, type HttpHandler, type NotRoutedHandler } from './gateway';
import {
  describeViolation,
  installGrantCheck,
  runAsRoute,
  runAsSocketRoute,
  runAsWorker,
  runWithGrants,
  watchConnectionsClient,
  type Violation,
} from './grant-check';
import { attachLiveSockets, type LiveSocketHandler, type LiveSockets } from './live-sockets';
import { ensurePrivateDir, preparePrivateDataDir, writePrivateFile } from './private-files';
import { startQueuePoller, type QueueHandler } from './queue-poller';
import { startScheduledRunner } from './scheduled-runner';
import { startStreamPoller, type StreamHandler } from './stream-poller';

const PROJECT_ROOT = resolve(__dirname, '..');
const NOT_ROUTED_ENTRY = 'functions/gateway/not-routed.ts';

export const DEFAULT_PORT = 3000;
export const DEFAULT_DATA_DIR = join(PROJECT_ROOT, '.data');
export const DEFAULT_TABLE_NAME = 'collab-local';
/** In the data folder: where the changes reader's stream poller keeps its place in the table's stream across restarts. */
export const STREAM_CHECKPOINT_FILE_NAME = 'stream-checkpoint.json';

/**
 * The checkpoint file of a stream reader's poller. The changes reader keeps the name a data folder made before the
 * readers were split already has; another reader's file is named for it, and a first run of it starts from now
 * (what was in progress is woken by resumeMigrations, as after any restart).
 */
export function streamCheckpointFileName(readerId: string): string {
  return readerId === streamChangesWorker.id ? STREAM_CHECKPOINT_FILE_NAME : `stream-checkpoint-${readerId}.json`;
}
/** In the data folder: the file queue that stands in for SQS (shared/adapters/queue/file-queue.ts). */
export const DELIVERY_QUEUE_DIR_NAME = 'queue';
/** In the data folder: the mailbox of the default email transport (shared/adapters/email/mailbox.ts), one .eml file per email. */
export const MAILBOX_DIR_NAME = 'mailbox';
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface LocalStackOptions {
  /** Gateway port; 0 picks a free one. Default 3000. */
  port?: number;
  /** Holds `dynamodb/` and `local-keys.json` across restarts. Default `<project>/.data`. */
  dataDir?: string;
  /** Nothing is kept: the database lives in memory and the keys in a temporary folder removed on stop. */
  inMemory?: boolean;
  /** DynamoDB Local's port; 0 or undefined picks a free one. */
  dynamodbPort?: number;
  tableName?: string;
  /** Aborting it ends a startup in progress; whatever was started is stopped again. */
  signal?: AbortSignal;
}

export interface LocalStack {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  port: number;
  dynamodbEndpoint: string;
  tableName: string;
  /** Stops everything that was started, in reverse order; resolves once DynamoDB Local has exited. */
  stop(): Promise<void>;
}

type Cleanup = () => Promise<void> | void;

/**
 * Starts the whole stack. Sets the environment the handlers read at load (TABLE_NAME, DYNAMODB_ENDPOINT,
 * LOCAL_KEYS_FILE, region and placeholder credentials) before any handler is loaded. When a step fails, what the
 * earlier steps started is stopped before the error is rethrown, so a failed start leaves no Java process behind.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const cleanups: Cleanup[] = [];
  const stop = once(() => runCleanups(cleanups));
  try {
    return await startSteps(options, cleanups, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

async function startSteps(
  options: LocalStackOptions,
  cleanups: Cleanup[],
  stop: () => Promise<void>,
): Promise<LocalStack> {
  const inMemory = options.inMemory === true;
  const dataDir = resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  const checkpoint = (): void => options.signal?.throwIfAborted();

  silenceNodeVersionWarning();
  await checkJava();
  const emulatorDir = await ensureDynamoDbLocal();
  checkpoint();

  // Owner-only when created; a warning when what exists is more open (local/private-files.ts).
  preparePrivateDataDir(dataDir);
  const keysFile = inMemory ? await temporaryKeysFile(cleanups) : join(dataDir, 'local-keys.json');
  ensureLocalKeysFile(keysFile);

  const dynamodb = await startDynamoDbLocal({
    port: options.dynamodbPort,
    inMemory,
    dbPath: inMemory ? undefined : join(dataDir, 'dynamodb'),
    emulatorDir,
    signal: options.signal,
  });
  cleanups.push(() => dynamodb.stop());
  checkpoint();

  await ensureTable(dynamodb.endpoint, tableName);
  checkpoint();

  // The delivery queue's folder: kept with the data (a restart resumes pending deliveries), or beside the
  // temporary keys when nothing is kept.
  const queueDir = join(dirname(keysFile), inMemory ? 'queue' : DELIVERY_QUEUE_DIR_NAME);
  // Where the default email transport writes (docs/decisions.md §12): kept with the data like the queue, unless
  // EMAIL_MAILBOX_DIR names another folder. Created now, owner-only: the emails carry tenants' recipients and content.
  const mailboxDir = chooseMailboxDir(join(dirname(keysFile), MAILBOX_DIR_NAME));
  ensurePrivateDir(mailboxDir);
  setHandlerEnvironment({ tableName, endpoint: dynamodb.endpoint, keysFile, queueDir, mailboxDir });
  // The handlers read their settings (AI base URLs, AI_TIMEOUT_MS, ...) from this process's environment when they
  // load. Reading them now makes a bad value stop the start with its message instead of failing the first request.
  require('../shared/core/config');
  startGrantCheck(tableName);
  // As the deployment does before the first request: the page-token key exists before any route reads it.
  await runDeployTasks();
  checkpoint();

  // The workers, woken by the table's stream as the event source mapping does in AWS; stopped before DynamoDB
  // Local is. Migrations that were running when the stack last stopped are woken once the poller reads the stream.
  // A kept database keeps its stream too: the checkpoint lets the poller resume after the last record the workers
  // handled, so what was written just before a kill -9 still reaches them. One poller per reader, each with its own
  // place in the stream, as each event source mapping has in AWS: a long migration run holds up only its own
  // reader, never the changes reader's webhooks, emails and profile copies.
  for (const worker of workers) {
    const poller = await startStreamPoller({
      endpoint: dynamodb.endpoint,
      tableName,
      checkpointFile: inMemory ? undefined : join(dataDir, streamCheckpointFileName(worker.id)),
      // Each reader runs its consumers' code from its entry, as in AWS, but each consumer under its own grants (the
      // reader's role in AWS is their union): a consumer that calls what only another declared fails a local test.
      workers: [{ worker, handler: loadReader(worker) }],
    });
    cleanups.push(() => poller.stop());
  }
  // The delivery worker, fed from the file queue as the SQS event source feeds it in AWS; stopped before the
  // stream poller's cleanup runs (cleanups run in reverse), so no job is taken while the stack winds down.
  const queuePoller = await startQueuePoller({
    dir: queueDir,
    functionName: deliveryQueueWorker.id,
    handler: (event, context) =>
      runAsWorker(deliveryQueueWorker, () => loadHandler<QueueHandler>(deliveryQueueWorker.entry)(event, context)),
  });
  cleanups.push(() => queuePoller.stop());
  // The scheduled workers (the live access backstop), run on an interval as their EventBridge rules run them in
  // AWS, each under its own grants; stopped before the pollers (cleanups run in reverse).
  for (const worker of scheduledWorkers) {
    const runner = startScheduledRunner({
      name: worker.id,
      everyMs: worker.localEverySeconds * 1000,
      run: () =>
        runAsWorker(worker, () =>
          loadHandler<(event: { periodSeconds: number }) => Promise<unknown>>(worker.entry)({
            periodSeconds: worker.localEverySeconds,
          }),
        ),
    });
    cleanups.push(() => runner.stop());
  }
  await resumeMigrations();
  checkpoint();

  const server = createGateway({ resolveHandler, notRouted });
  // The live-sync WebSocket API on the same port (local/live-sockets.ts), answering through the Management API
  // client the handlers use in AWS, with the in-process stand-in in place of the network.
  const liveSockets = attachLiveSockets(server, resolveSocketHandler);
  useLiveConnectionsStandIn(liveSockets);
  // Loopback only: the local stack has placeholder credentials and must not be reachable from the network.
  const port = await listen(server, options.port ?? DEFAULT_PORT, '127.0.0.1');
  cleanups.push(() => closeServer(server));
  // Runs before the server closes (cleanups run in reverse): every connection hears $disconnect first.
  cleanups.push(() => liveSockets.close());
  checkpoint();

  const baseUrl = `http://127.0.0.1:${port}`;
  writeStateFile(dataDir, { baseUrl, dynamodbEndpoint: dynamodb.endpoint, tableName, keysFile, queueDir }, cleanups);

  return {
    baseUrl,
    port,
    dynamodbEndpoint: dynamodb.endpoint,
    tableName,
    stop,
  };
}

/** Where the operator CLI (bin/admin.ts) finds the running stack: `<DATA_DIR>/local-stack.json`, removed on stop. */
export const STATE_FILE_NAME = 'local-stack.json';

function writeStateFile(
  dataDir: string,
  state: { baseUrl: string; dynamodbEndpoint: string; tableName: string; keysFile: string; queueDir: string },
  cleanups: Cleanup[],
): void {
  ensurePrivateDir(dataDir);
  const file = join(dataDir, STATE_FILE_NAME);
  writePrivateFile(file, `${JSON.stringify({ ...state, pid: process.pid }, null, 2)}\n`);
  cleanups.push(() => rmSync(file, { force: true }));
}

/** For `--in-memory`: fresh keys in a temporary folder, removed on stop and, failing that, when the process exits. */
async function temporaryKeysFile(cleanups: Cleanup[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'collab-local-'));
  const remove = (): void => rmSync(dir, { recursive: true, force: true });
  process.on('exit', remove);
  cleanups.push(() => {
    process.off('exit', remove);
    remove();
  });
  return join(dir, 'local-keys.json');
}

/**
 * Creates the table when it does not exist yet; a persisted database keeps it across restarts, and gets the
 * indexes the shared definition gained since it was created (as `cdk deploy` would add them in AWS).
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: LOCAL_CREDENTIALS });
  try {
    if (await tableExists(client, tableName)) {
      await addMissingIndexes(client, tableName);
      return;
    }
    try {
      await client.send(new CreateTableCommand(createTableInput(tableName)));
    } catch (error) {
      // Someone else created it between our check and our create: that is the state we wanted.
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1, maxDelay: 2 }, { TableName: tableName });
  } finally {
    client.destroy();
  }
}

async function addMissingIndexes(client: DynamoDBClient, tableName: string): Promise<void> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  const wanted = createTableInput(tableName);
  for (const index of wanted.GlobalSecondaryIndexes ?? []) {
    if (present.has(index.IndexName)) continue;
    const keyNames = new Set((index.KeySchema ?? []).map((k) => k.AttributeName));
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: (wanted.AttributeDefinitions ?? []).filter((a) => keyNames.has(a.AttributeName)),
        GlobalSecondaryIndexUpdates: [
          { Create: { IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection } },
        ],
      }),
    );
    // DynamoDB (Local too) builds one index at a time: the next create is refused until this one is active.
    await waitForActiveIndexes(client, tableName);
  }
}

async function waitForActiveIndexes(client: DynamoDBClient, tableName: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if ((Table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE')) return;
    if (Date.now() > deadline)
      throw new Error(`The indexes of table ${tableName} did not become active within ${timeoutMs / 1000} s.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function tableExists(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return true;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return false;
    throw error;
  }
}

function setHandlerEnvironment(values: {
  tableName: string;
  endpoint: string;
  keysFile: string;
  queueDir: string;
  mailboxDir: string;
}): void {
  process.env.TABLE_NAME = values.tableName;
  process.env.DELIVERY_QUEUE_DIR = values.queueDir;
  process.env.EMAIL_MAILBOX_DIR = values.mailboxDir;
  // Receivers on a laptop are local (docs/decisions.md §11); set it to false to try the address check.
  process.env.WEBHOOK_ALLOW_PRIVATE_URLS ??= 'true';
  process.env.DYNAMODB_ENDPOINT = values.endpoint;
  process.env.LOCAL_KEYS_FILE = values.keysFile;
  process.env.AWS_REGION ??= 'local';
  process.env.AWS_ACCESS_KEY_ID ??= LOCAL_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= LOCAL_CREDENTIALS.secretAccessKey;
  // The live metrics are CloudWatch's embedded metric format on stdout, one JSON object per live message: noise on a
  // laptop, where nothing reads them. Counted, not written (set it to false to see them).
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
}

/**
 * Wakes, through the stream, every migration still pending or in progress when the stack last stopped. Loaded on
 * use, after the environment is set, like the handlers. Not fatal: the stack serves without it, and says so.
 */
async function resumeMigrations(): Promise<void> {
  try {
    const { listActiveMigrations, wakeMigration } = require(
      join(PROJECT_ROOT, 'shared', 'db', 'migration'),
    ) as typeof import('../shared/db/migration');
    for (const migration of await listActiveMigrations(100)) await wakeMigration(migration, Date.now());
  } catch (error) {
    console.error('Local stack: could not resume the migrations that were running:', error);
  }
}

const handlerCache = new Map<string, HttpHandler>();

/**
 * Loads the handler of a route the way Lambda does on a cold start: once per module, then reused. It runs under
 * the grants of its route (local/grant-check.ts), as its function's role holds it in AWS.
 */
function resolveHandler(path: string): HttpHandler | undefined {
  const route = findRoute(path);
  if (route === undefined) return undefined;
  let handler = handlerCache.get(path);
  if (handler === undefined) {
    const loaded = loadHandler<HttpHandler>(route.entry);
    handler = (event, context) => runAsRoute(path, () => loaded(event, context));
    handlerCache.set(path, handler);
  }
  return handler;
}

/** Loaded on first use: the gateway module should not fail to load because of a handler's imports. No grants. */
const notRouted: NotRoutedHandler = (event, context) =>
  runWithGrants('$default', NO_GRANTS, () => loadHandler<NotRoutedHandler>(NOT_ROUTED_ENTRY)(event, context));

/**
 * DynamoDB Local and the local KMS enforce no IAM: every command a route, worker or deploy task sends is held
 * against its grants here, refused as AWS would refuse it, and logged; with GRANT_CHECK_REPORT set (the e2e tier),
 * also appended to that file as one JSON line, so a test run can fail on it.
 */
function startGrantCheck(tableName: string): void {
  const { dynamodb } = require(join(PROJECT_ROOT, 'shared', 'db', 'client')) as typeof import('../shared/db/client');
  const { kmsClient } = require(
    join(PROJECT_ROOT, 'shared', 'crypto', 'encryption'),
  ) as typeof import('../shared/crypto/encryption');
  const reportFile = process.env.GRANT_CHECK_REPORT;
  installGrantCheck({
    dynamodb,
    kms: kmsClient(),
    table: tableName,
    onViolation: (violation: Violation) => {
      console.error(describeViolation(violation));
      if (reportFile !== undefined && reportFile !== '') appendFileSync(reportFile, `${JSON.stringify(violation)}\n`);
    },
  });
}

/** The mailbox folder an earlier start in this process chose by default (tests start several stacks in one process). */
let defaultMailboxDir: string | undefined;

/**
 * EMAIL_MAILBOX_DIR when the operator set it, else `fallback`. A value this process set itself on an earlier start
 * is no operator's choice: it names the folder of another data folder, perhaps one removed since.
 */
function chooseMailboxDir(fallback: string): string {
  const configured = process.env.EMAIL_MAILBOX_DIR;
  if (configured !== undefined && configured.trim() !== '' && configured !== defaultMailboxDir)
    return resolve(configured);
  defaultMailboxDir = fallback;
  return fallback;
}

/** A stream reader built from its entry's `consumers`, each consumer's calls checked against its own grants. */
function loadReader(worker: Worker): StreamHandler {
  const loaded = require(join(PROJECT_ROOT, worker.entry)) as { consumers?: ConsumersOf<Worker> };
  if (loaded.consumers === undefined) throw new Error(`${worker.entry} does not export its consumers.`);
  return streamHandler(worker, loaded.consumers, (consumer, fn) => runAsWorker(consumer, fn));
}

const socketHandlerCache = new Map<SocketRouteKey, LiveSocketHandler>();

/** The handler of a route key of the live WebSocket API, under that route's grants. */
function resolveSocketHandler(routeKey: SocketRouteKey): LiveSocketHandler {
  let handler = socketHandlerCache.get(routeKey);
  if (handler === undefined) {
    const route = socketRoutes.find((entry) => entry.routeKey === routeKey);
    if (route === undefined) throw new Error(`No live socket route ${routeKey}.`);
    const loaded = loadHandler<LiveSocketHandler>(route.entry);
    handler = (event, context) => runAsSocketRoute(route, () => loaded(event, context));
    socketHandlerCache.set(routeKey, handler);
  }
  return handler;
}

/** Plugs the stand-in into the handlers' Management API client, and holds that client to the grants. */
function useLiveConnectionsStandIn(sockets: LiveSockets): void {
  const adapter = require(
    join(PROJECT_ROOT, 'shared', 'adapters', 'live', 'management-api'),
  ) as typeof import('../shared/adapters/live/management-api');
  adapter.useLocalConnections(sockets.managementApi as never);
  watchConnectionsClient(adapter.connectionsClient());
}

function loadHandler<T>(entry: string): T {
  const file = join(PROJECT_ROOT, entry);
  // Handlers are TypeScript; `require` goes through tsx (npm start) or ts-jest (tests), which compile them.
  const loaded = require(file) as { handler?: unknown };
  if (typeof loaded.handler !== 'function') {
    throw new Error(`${entry} does not export a handler function.`);
  }
  return loaded.handler as T;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolveListen((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting connections, ends idle keep-alive ones at once and cuts the rest after a short grace. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    const timer = setTimeout(() => server.closeAllConnections(), 2_000);
    server.close(() => {
      clearTimeout(timer);
      resolveClose();
    });
    server.closeIdleConnections();
  });
}

async function runCleanups(cleanups: Cleanup[]): Promise<void> {
  for (let cleanup = cleanups.pop(); cleanup !== undefined; cleanup = cleanups.pop()) {
    try {
      await cleanup();
    } catch (error) {
      // Keep going: a failed step must not leave the later ones (DynamoDB Local above all) running.
      console.error('Local stack: a stop step failed', error);
    }
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= fn());
}
