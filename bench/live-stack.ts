/**
 * The live bench's stack process (bench/live.ts forks it): the local stack in memory, as the other suites run it, but
 * in a process of its own, so that the bench's 100 Yjs clients (their decoding, encoding and timers) do not share
 * an event loop with the handlers they are timing. It meters what AWS would bill and answers the bench over IPC:
 *
 * - DynamoDB capacity per caller (ReturnConsumedCapacity on every command, as test/support/capacity-meter.ts
 *   asks for it, transactions sized by its `transactionWriteUnits`): the live handlers (`$connect`, `$default`,
 *   `$disconnect`), the stream consumers (CRDT log compaction, webhook events), and the rest (REST requests);
 * - the live handlers' invocations, their time, and the bytes of each incoming frame (API Gateway bills a message
 *   per started 32 KB); for `$default`, also by what the frame carried (frameKind: `awareness+update` for an edit
 *   and its caret move in one batch), with the capacity and the posts of handling it, and the durations per kind;
 * - the largest frame in and the largest post (API Gateway's 32 KB frame);
 * - the Management API's PostToConnection calls and their bytes (the messages out), per caller;
 * - the process's memory (after a full GC: the process runs with --expose-gc).
 *
 * The handlers and the stream consumers are timed by wrapping their modules' exports as the stack loads them
 * (Module._load): nothing of local/ or shared/ changes for the bench.
 */
// First: the bench environment (a silent logger), before the stack loads anything.
import './environment';
import { AsyncLocalStorage } from 'node:async_hooks';
import Module from 'node:module';
import { join, resolve } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startLocalStack } from '../local/local-stack';
import { transactionWriteUnits } from '../test/support/capacity-meter';

const ROOT = resolve(__dirname, '..');
const LIVE_ENTRIES: Record<string, string> = {
  [join(ROOT, 'functions/live/connect.ts')]: '$connect',
  [join(ROOT, 'functions/live/message.ts')]: '$default',
  [join(ROOT, 'functions/live/disconnect.ts')]: '$disconnect',
};
const STREAM_ENTRY = join(ROOT, 'functions/workers/stream-changes.ts');

/**
 * Who is calling: a live route key, `stream:<consumer>`, or nothing (a REST request, a poller); for `$default`, also
 * what the frame carried (frameKind), so that a figure can be read per kind of frame while other kinds run beside it.
 */
const caller = new AsyncLocalStorage<{ name: string; kind?: string }>();
const callerName = () => caller.getStore()?.name ?? 'other';
const callerKind = () => caller.getStore()?.kind;

export interface Bucket {
  read: number;
  write: number;
  calls: number;
}

export interface Invocations {
  count: number;
  ms: number;
  /** API Gateway's billed messages in: one per started 32 KB of each incoming frame. */
  units: number;
  bytes: number;
}

/** What the `$default` frames of one kind (frameKind) counted, everything done while handling them included. */
export interface FrameKind {
  count: number;
  ms: number;
  /** API Gateway's billed messages in (32 KB units). */
  units: number;
  read: number;
  write: number;
  /** PostToConnection calls made while handling them, and their 32 KB units. */
  posts: number;
  postUnits: number;
}

export interface Snapshot {
  dynamodb: Record<string, Bucket>;
  /** `$default` frames by what they carried (frameKind): `update`, `awareness`, `awareness+update`, `chunk`... */
  frames: Record<string, FrameKind>;
  /** The largest frame a client sent and the largest post, in bytes (API Gateway: 32 KB a frame, 128 KB a message). */
  largestFrameBytes: number;
  largestPostBytes: number;
  invocations: Record<string, Invocations>;
  /** Stream consumers' records handled. */
  records: Record<string, number>;
  /** PostToConnection calls per caller, with their 32 KB units and bytes. */
  posts: Record<string, { count: number; units: number; bytes: number; largestBytes: number }>;
  /** PostToConnection calls that failed, by error name, with the largest such message's bytes. */
  postErrors: Record<string, { count: number; largestBytes: number }>;
  /** Handler calls answered with a status other than 200 (API Gateway tells the client nothing), per route key. */
  failures: Record<string, number>;
  /** Accepted $connect minus $disconnect since the start. */
  open: number;
}

const API_GATEWAY_MESSAGE_UNIT = 32 * 1024;
const units = (bytes: number) => Math.max(1, Math.ceil(bytes / API_GATEWAY_MESSAGE_UNIT));

const snapshot: Snapshot = {
  dynamodb: {},
  frames: {},
  largestFrameBytes: 0,
  largestPostBytes: 0,
  invocations: {},
  records: {},
  posts: {},
  postErrors: {},
  failures: {},
  open: 0,
};
/** The `$default` durations, one per frame, for their distribution. */
let defaultMs: number[] = [];
/** The same by frame kind (frameKind), since the bench last asked for them ('kindMs'). */
let kindMs: Record<string, number[]> = {};

const bucketOf = <T>(record: Record<string, T>, name: string, empty: () => T): T => (record[name] ??= empty());
const frameBucket = (kind: string) =>
  bucketOf(snapshot.frames, kind, () => ({ count: 0, ms: 0, units: 0, read: 0, write: 0, posts: 0, postUnits: 0 }));

/** y-protocols message kinds by their first varints (message type, then the sync step). */
function messageKind(bytes: Uint8Array): string {
  if (bytes.length === 0) return 'empty';
  switch (bytes[0]) {
    case 0:
      return ['syncStep1', 'syncStep2', 'update'][bytes[1]] ?? 'sync?';
    case 1:
      return 'awareness';
    case 2:
      return 'auth';
    case 3:
      return 'queryAwareness';
    default:
      return 'other';
  }
}

/**
 * What a `$default` frame carried, read from the frame as it arrives (the framing of shared/domain/live/framing.ts:
 * a whole message's base64, a batch `!<base64>,<base64>...`, or a chunk `~id:i/n:part`; binary frames are one
 * message): the kinds of its messages, sorted and joined by `+`, so that an update and its caret move in one batch
 * is `awareness+update`. A separate reading of the format, so that the bench counts whatever the service does.
 */
export function frameKind(event: { body?: unknown; isBase64Encoded?: boolean }): string {
  if (typeof event.body !== 'string') return 'none';
  if (event.isBase64Encoded === true) return messageKind(Buffer.from(event.body, 'base64'));
  if (event.body.startsWith('~')) return 'chunk';
  const texts = event.body.startsWith('!') ? event.body.slice(1).split(',') : [event.body];
  return [...new Set(texts.map((text) => messageKind(Buffer.from(text, 'base64'))))].sort().join('+');
}

function timedLive(routeKey: string, handler: (event: any, context: unknown) => Promise<unknown>) {
  return async (event: any, context: unknown) => {
    const bytes =
      typeof event.body === 'string'
        ? event.isBase64Encoded
          ? Buffer.from(event.body, 'base64').length
          : Buffer.byteLength(event.body)
        : 0;
    const kind = routeKey === '$default' ? frameKind(event) : undefined;
    if (routeKey === '$default') snapshot.largestFrameBytes = Math.max(snapshot.largestFrameBytes, bytes);
    const started = performance.now();
    try {
      const result = await caller.run({ name: routeKey, kind }, () => handler(event, context));
      if (routeKey === '$connect') snapshot.open += 1;
      const status = (result as { statusCode?: number } | undefined)?.statusCode ?? 200;
      if (status !== 200) snapshot.failures[routeKey] = (snapshot.failures[routeKey] ?? 0) + 1;
      return result;
    } finally {
      const ms = performance.now() - started;
      const entry = bucketOf(snapshot.invocations, routeKey, () => ({ count: 0, ms: 0, units: 0, bytes: 0 }));
      entry.count += 1;
      entry.ms += ms;
      entry.bytes += bytes;
      entry.units += routeKey === '$default' ? units(bytes) : 0;
      if (routeKey === '$default') defaultMs.push(ms);
      if (kind !== undefined) {
        (kindMs[kind] ??= []).push(ms);
        const frame = frameBucket(kind);
        frame.count += 1;
        frame.ms += ms;
        frame.units += units(bytes);
      }
      if (routeKey === '$disconnect') snapshot.open -= 1;
    }
  };
}

function timedConsumer(id: string, consume: (changes: readonly unknown[], context: unknown) => Promise<unknown>) {
  return async (changes: readonly unknown[], context: unknown) => {
    const started = performance.now();
    try {
      return await caller.run({ name: `stream:${id}` }, () => consume(changes, context));
    } finally {
      const entry = bucketOf(snapshot.invocations, `stream:${id}`, () => ({ count: 0, ms: 0, units: 0, bytes: 0 }));
      entry.count += 1;
      entry.ms += performance.now() - started;
      snapshot.records[id] = (snapshot.records[id] ?? 0) + changes.length;
    }
  };
}

/** Wraps the exports of the live handlers and the stream reader as the stack requires them. */
function wrapLoadedModules(): void {
  const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
  const original = loader._load;
  const wrapped = new Map<string, unknown>();
  loader._load = function load(request: string, parent: unknown, isMain: boolean) {
    const loaded = original.call(this, request, parent, isMain) as Record<string, any>;
    const routeKey = LIVE_ENTRIES[request];
    if (routeKey === undefined && request !== STREAM_ENTRY) return loaded;
    if (!wrapped.has(request)) {
      wrapped.set(
        request,
        routeKey !== undefined
          ? { ...loaded, handler: timedLive(routeKey, loaded.handler) }
          : {
              ...loaded,
              consumers: Object.fromEntries(
                Object.entries(loaded.consumers).map(([id, consume]) => [id, timedConsumer(id, consume as never)]),
              ),
            },
      );
    }
    return wrapped.get(request);
  };
}

function meterDynamoDb(client: DynamoDBClient): void {
  const reads = new Set([
    'GetItemCommand',
    'BatchGetItemCommand',
    'QueryCommand',
    'ScanCommand',
    'TransactGetItemsCommand',
  ]);
  const writes = new Set([
    'PutItemCommand',
    'UpdateItemCommand',
    'DeleteItemCommand',
    'BatchWriteItemCommand',
    'TransactWriteItemsCommand',
  ]);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      if (!reads.has(command) && !writes.has(command)) return next(args);
      const name = callerName();
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (
        result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }
      ).ConsumedCapacity;
      const reported = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
        (sum, c) => sum + (c.CapacityUnits ?? 0),
        0,
      );
      const bucket = bucketOf(snapshot.dynamodb, name, () => ({ read: 0, write: 0, calls: 0 }));
      // DynamoDB Local reports a flat 4 units for any transaction: sized as DynamoDB bills it (capacity-meter.ts).
      const counted = command === 'TransactWriteItemsCommand' ? transactionWriteUnits(args.input) : reported;
      if (reads.has(command)) bucket.read += counted;
      else bucket.write += counted;
      bucket.calls += 1;
      const kind = callerKind();
      if (kind !== undefined) {
        if (reads.has(command)) frameBucket(kind).read += counted;
        else frameBucket(kind).write += counted;
      }
      return result;
    },
    { step: 'initialize', name: 'liveBenchCapacity' },
  );
}

function meterPosts(client: { middlewareStack: DynamoDBClient['middlewareStack'] }): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'PostToConnectionCommand') return next(args);
      const bytes = (args.input as { Data?: Uint8Array }).Data?.byteLength ?? 0;
      try {
        const result = await next(args);
        const bucket = bucketOf(snapshot.posts, callerName(), () => ({
          count: 0,
          units: 0,
          bytes: 0,
          largestBytes: 0,
        }));
        bucket.count += 1;
        bucket.units += units(bytes);
        bucket.bytes += bytes;
        bucket.largestBytes = Math.max(bucket.largestBytes, bytes);
        snapshot.largestPostBytes = Math.max(snapshot.largestPostBytes, bytes);
        const kind = callerKind();
        if (kind !== undefined) {
          frameBucket(kind).posts += 1;
          frameBucket(kind).postUnits += units(bytes);
        }
        return result;
      } catch (error) {
        const failed = bucketOf(snapshot.postErrors, (error as Error).name, () => ({ count: 0, largestBytes: 0 }));
        failed.count += 1;
        failed.largestBytes = Math.max(failed.largestBytes, bytes);
        throw error;
      }
    },
    { step: 'initialize', name: 'liveBenchPosts' },
  );
}

async function main(): Promise<void> {
  wrapLoadedModules();
  const stack = await startLocalStack({ inMemory: true, port: 0 });
  // The modules the handlers use, loaded after the stack set the environment (as bench/harness.ts does).
  const { dynamodb } = await import('../shared/db/client');
  const { connectionsClient } = await import('../shared/adapters/live/management-api');
  meterDynamoDb(dynamodb);
  meterPosts(connectionsClient() as never);

  const send = (message: unknown) => process.send?.(message);
  process.on('message', (message: { id: number; command: string }) => {
    switch (message.command) {
      case 'snapshot':
        send({ id: message.id, result: snapshot });
        return;
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        send({ id: message.id, result: (user + system) / 1000 });
        return;
      }
      case 'kindMs':
        send({ id: message.id, result: kindMs });
        kindMs = {};
        return;
      case 'resetLargest':
        snapshot.largestFrameBytes = 0;
        snapshot.largestPostBytes = 0;
        send({ id: message.id, result: null });
        return;
      case 'defaultMs': {
        send({ id: message.id, result: defaultMs });
        defaultMs = [];
        return;
      }
      case 'memory': {
        // Twice: a first collection can leave garbage a second one frees (weak references, finalizers).
        for (let i = 0; i < 2; i += 1) (globalThis as { gc?: () => void }).gc?.();
        send({ id: message.id, result: process.memoryUsage() });
        return;
      }
      case 'stop':
        // A stop that fails still ends the process: the bench is waiting for it.
        void stack
          .stop()
          .catch((error: unknown) => console.error('The local stack did not stop cleanly:', error))
          .finally(() => {
            send({ id: message.id, result: null });
            process.exit(0);
          });
    }
  });
  // The bench gone (finished, failed, interrupted): the stack and its DynamoDB Local go too.
  process.once('disconnect', () => {
    void stack.stop().finally(() => process.exit(0));
  });
  send({ ready: stack.baseUrl });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
