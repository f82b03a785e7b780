/**
 * The local stand-in for Lambda's DynamoDB event source mapping: polls the table's stream on DynamoDB Local and
 * hands the records each worker of the worker table is filtered for to that worker's handler, the same handler
 * that runs in AWS. Like the event source mapping it delivers records of a shard in order, one batch at a time,
 * and retries the records a handler reports as failed (batchItemFailures). A reader reports a record only when it
 * could not even keep it as a dead letter (shared/domain/stream/dispatch.ts handles consumers' failures itself);
 * after the last retry the poller keeps such records as dead letters of the reader (shared/db/dead-letter.ts),
 * where AWS would send only their sequence range to the on-failure queue, and while it cannot, it retries on:
 * a record is never dropped.
 *
 * New shards are read from their start. Where the shards open at start-up are read from depends on the checkpoint:
 * - With a `checkpointFile` (a stack that keeps its data), the poller records there, per shard, the last record the
 *   workers have handled (delivered, or given up on after the last retry), and a restart resumes each shard after
 *   it: records written just before the stack was killed, which no worker had seen, are delivered after the
 *   restart (docs/decisions.md §11, Delivery: nothing lost). Shards the file does not name were opened since it
 *   was written and are read from their start. DynamoDB Local keeps its stream records and shard ids across a
 *   restart when it runs on a database folder (test/connected/stream-checkpoint.test.ts holds it to that). A
 *   position the stream no longer has (trimmed, or refused as invalid) is read from the shard's start instead:
 *   workers ignore records of work that has ended, so a replay costs time, a lost record costs data.
 * - With a `checkpointFile` that does not exist yet (the first run), the open shards are read to their end without
 *   delivering anything, which is "from now" as LATEST is, but with a position to write down.
 * - Without one (an in-memory stack, whose stream starts empty anyway), from "now" (LATEST).
 * Either way, once this resolves, writes reach the workers, and the stack wakes the work that was in progress when
 * it stopped.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ResourceNotFoundException,
  type Shard,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { readFile } from 'node:fs/promises';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { writeFileAtomically } from '../shared/adapters/files/atomic-file';
import { matchesStreamFilter, streamFiltersOf } from '../shared/db/item-change';
import { DEFAULT_STREAM_BATCH_SIZE, type StreamConsumer, type StreamFilter, type Worker } from '../shared/workers';

export type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

/**
 * What the poller feeds, as an event source mapping would: a stream reader of the worker table (filtered on its
 * consumers' interests), one consumer alone (filtered on its own), or anything with filters of its own (tests).
 */
export type StreamSubscriber = { readonly id: string; readonly batchSize?: number } & (
  Pick<Worker, 'consumers'> | Pick<StreamConsumer, 'changes'> | { readonly filters: readonly StreamFilter[] }
);

/** The filter of a subscriber: computed in one place from consumers' interests (shared/db/item-change.ts). */
function filtersOf(subscriber: StreamSubscriber): readonly StreamFilter[] {
  if ('filters' in subscriber) return subscriber.filters;
  return streamFiltersOf('consumers' in subscriber ? subscriber.consumers : [subscriber]);
}

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  workers: ReadonlyArray<{ worker: StreamSubscriber; handler: StreamHandler }>;
  /** Pause between polls that found nothing. */
  idleMs?: number;
  /** Pause before a batch a worker failed on is handed to it again; default 1 s. */
  retryPauseMs?: number;
  /** Where the position of each shard is kept across restarts (see above); none: start from LATEST. */
  checkpointFile?: string;
}

export interface StreamPoller {
  stop(): Promise<void>;
}

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
/** Lambda's own limit for a function run: what a worker is told it has left. */
const WORKER_TIME_MS = 15 * 60 * 1000;
const RETRY_ATTEMPTS = 10;
const DEFAULT_RETRY_PAUSE_MS = 1000;
/** Shards are listed again every this many polls (DynamoDB Local opens new ones over time). */
const SHARD_REFRESH_POLLS = 20;

/** Records per GetRecords while reading the open shards to their end on a first run. */
const SKIP_PAGE_LIMIT = 1000;
/** Records per GetRecords call while delivering (the API's maximum). */
const READ_PAGE_LIMIT = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The checkpoint file: the stream it is about, and the last handled sequence number of each shard. */
interface Checkpoint {
  streamArn: string;
  shards: Record<string, string>;
}

function isCheckpoint(value: unknown): value is Checkpoint {
  if (typeof value !== 'object' || value === null) return false;
  const { streamArn, shards } = value as Record<string, unknown>;
  return (
    typeof streamArn === 'string' &&
    typeof shards === 'object' &&
    shards !== null &&
    Object.values(shards).every((sequenceNumber) => typeof sequenceNumber === 'string')
  );
}

/**
 * The checkpoint in `file`; undefined when there is none yet. A file that cannot be read as one (edited by hand:
 * it is written atomically) counts as a checkpoint naming no shard, so every shard is read from its start.
 */
async function readCheckpoint(file: string): Promise<Checkpoint | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (isCheckpoint(parsed)) return parsed;
  } catch {
    // Reported below.
  }
  console.error(`Stream poller: ${file} is not a stream checkpoint; every shard is read from its start.`);
  return { streamArn: '', shards: {} };
}

/** Errors of GetShardIterator meaning that the stream cannot resume after that sequence number. */
function isUnusablePosition(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  // TrimmedDataAccessException: older than the stream keeps. ValidationException: not a sequence number.
  // InternalFailure: what DynamoDB Local answers for a sequence number past the end of the shard.
  return ['TrimmedDataAccessException', 'ValidationException', 'InternalFailure', 'InternalServerError'].includes(name);
}

/** The subscriber's event filter, as the event source mapping applies it. */
function matches(filters: readonly StreamFilter[], record: StreamRecord): boolean {
  const { Keys, NewImage } = record.dynamodb ?? {};
  return matchesStreamFilter(filters, { eventName: record.eventName, keys: Keys, newImage: NewImage });
}

/**
 * A stream record in the shape of a Lambda event record. Only filtered records get here, and the worker items
 * they carry hold no binary attributes, so the attribute maps pass through as they are.
 */
function toLambdaRecord(record: StreamRecord): DynamoDBRecord {
  const { dynamodb } = record;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventSource: 'aws:dynamodb',
    awsRegion: 'local',
    dynamodb: {
      Keys: dynamodb?.Keys as NonNullable<DynamoDBRecord['dynamodb']>['Keys'],
      NewImage: dynamodb?.NewImage as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'],
      OldImage: dynamodb?.OldImage as NonNullable<DynamoDBRecord['dynamodb']>['OldImage'],
      SequenceNumber: dynamodb?.SequenceNumber,
      SizeBytes: dynamodb?.SizeBytes,
      StreamViewType: dynamodb?.StreamViewType,
    },
  };
}

function workerContext(worker: StreamSubscriber): Context {
  const deadline = Date.now() + WORKER_TIME_MS;
  return {
    functionName: worker.id,
    awsRequestId: `local-${Date.now()}`,
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as Context;
}

/**
 * Delivers records to a worker, retrying the ones it reports as failed; gives up on them after the last retry.
 * Resolves true once the records are handled (delivered or given up on), false when the poller stopped first.
 */
async function deliver(
  worker: StreamSubscriber,
  handler: StreamHandler,
  records: DynamoDBRecord[],
  stopped: () => boolean,
  retryPauseMs: number,
): Promise<boolean> {
  let pending = records;
  for (let attempt = 1; pending.length > 0; attempt += 1) {
    let failed: Set<string>;
    try {
      const response = await handler({ Records: pending }, workerContext(worker));
      failed = new Set((response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier));
    } catch (error) {
      console.error(`Stream worker ${worker.id} failed:`, error);
      failed = new Set(pending.map((record) => record.dynamodb?.SequenceNumber ?? ''));
    }
    // As the event source mapping does: the first failed record and every record after it are retried.
    const first = pending.findIndex((record) => failed.has(record.dynamodb?.SequenceNumber ?? ''));
    pending = first < 0 ? [] : pending.slice(first);
    if (pending.length === 0) return true;
    if (stopped()) return false;
    if (attempt >= RETRY_ATTEMPTS && (await keepAsDeadLetters(worker, pending, attempt))) return true;
    await sleep(retryPauseMs);
  }
  return true;
}

/** Keeps records a worker kept failing on as dead letters of the worker; false when even that fails. */
async function keepAsDeadLetters(
  worker: StreamSubscriber,
  records: readonly DynamoDBRecord[],
  attempts: number,
): Promise<boolean> {
  try {
    // Loaded here: the table's modules read their configuration when loaded, which the stack sets after start-up.
    const { EVERY_CONSUMER, putDeadLetters } = await import('../shared/db/dead-letter');
    await putDeadLetters(
      worker.id,
      EVERY_CONSUMER,
      records,
      `The stream reader failed on the record ${attempts} times.`,
    );
    console.error(
      `Stream worker ${worker.id} gave up on ${records.length} record(s) after ${attempts} attempts; kept as dead letters (npm run admin -- replay-dead-letters).`,
    );
    return true;
  } catch (error) {
    console.error(
      `Stream worker ${worker.id}: ${records.length} record(s) failed ${attempts} times and cannot be kept as dead letters; retrying.`,
      error,
    );
    return false;
  }
}

export async function startStreamPoller(options: StreamPollerOptions): Promise<StreamPoller> {
  const dynamodb = new DynamoDBClient({ endpoint: options.endpoint, region: 'local', credentials: CREDENTIALS });
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: 'local', credentials: CREDENTIALS });
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: options.tableName }));
  dynamodb.destroy();
  const streamArn = Table?.LatestStreamArn;
  if (streamArn === undefined) throw new Error(`Table ${options.tableName} has no stream.`);

  const checkpointFile = options.checkpointFile;
  const saved = checkpointFile === undefined ? undefined : await readCheckpoint(checkpointFile);
  if (saved !== undefined && saved.streamArn !== '' && saved.streamArn !== streamArn) {
    console.error(
      `Stream poller: ${checkpointFile} is about another stream (the table was made again); every shard is read from its start.`,
    );
  }
  /** The last record handled in each shard: what the checkpoint file holds. */
  const positions = new Map<string, string>(saved?.streamArn === streamArn ? Object.entries(saved.shards) : []);
  let written = JSON.stringify(saved ?? null);
  const writeCheckpoint = async (): Promise<void> => {
    if (checkpointFile === undefined) return;
    const content = JSON.stringify({ streamArn, shards: Object.fromEntries(positions) } satisfies Checkpoint);
    if (content === written) return;
    await writeFileAtomically(checkpointFile, `${content}\n`);
    written = content;
  };

  const iteratorOf = async (shardId: string, type: 'LATEST' | 'TRIM_HORIZON'): Promise<string | undefined> => {
    const { ShardIterator } = await streams.send(
      new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: type }),
    );
    return ShardIterator;
  };

  /** Where to read a shard from: after its checkpoint, else from its start; undefined when nothing is left in it. */
  const resumeShard = async (shard: Shard): Promise<string | undefined> => {
    const shardId = String(shard.ShardId);
    const position = positions.get(shardId);
    if (position === undefined) return iteratorOf(shardId, 'TRIM_HORIZON');
    if (position === shard.SequenceNumberRange?.EndingSequenceNumber) return undefined;
    try {
      const { ShardIterator } = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shardId,
          ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
          SequenceNumber: position,
        }),
      );
      return ShardIterator;
    } catch (error) {
      if (!isUnusablePosition(error)) throw error;
      console.error(
        `Stream poller: cannot resume shard ${shardId} after ${position} (${(error as Error).name}); reading it from its start.`,
      );
      return iteratorOf(shardId, 'TRIM_HORIZON');
    }
  };

  /**
   * A first run with checkpoints: reads an open shard to its end without delivering anything (what LATEST does),
   * so that the position of "now" can be written down. Returns the iterator to go on from.
   */
  const skipToEnd = async (shardId: string): Promise<string | undefined> => {
    let iterator = await iteratorOf(shardId, 'TRIM_HORIZON');
    while (iterator !== undefined) {
      const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: SKIP_PAGE_LIMIT }));
      const last = page.Records?.at(-1)?.dynamodb?.SequenceNumber;
      if (last === undefined) return page.NextShardIterator;
      positions.set(shardId, last);
      iterator = page.NextShardIterator;
    }
    return undefined;
  };

  /** Every shard of the stream (DescribeStream lists them a page at a time). */
  const listShards = async (): Promise<Shard[]> => {
    const shards: Shard[] = [];
    let after: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: after }),
      );
      shards.push(...(StreamDescription?.Shards ?? []));
      after = StreamDescription?.LastEvaluatedShardId;
    } while (after !== undefined);
    return shards;
  };

  /** Open shards and where to read next; a closed shard leaves the map once read to its end. */
  const iterators = new Map<string, string | undefined>();
  const seen = new Set<string>();
  /** Reads the shard list; `firstRun`: the shards there are now are read from "now" (see the top of the file). */
  const refreshShards = async (firstRun = false): Promise<void> => {
    const shards = await listShards();
    const listed = new Set(shards.map((shard) => shard.ShardId));
    // Shards the stream has trimmed away are not kept in the checkpoint.
    for (const shardId of positions.keys()) if (!listed.has(shardId)) positions.delete(shardId);
    for (const shard of shards) {
      const shardId = shard.ShardId;
      if (shardId === undefined || seen.has(shardId)) continue;
      seen.add(shardId);
      const ending = shard.SequenceNumberRange?.EndingSequenceNumber;
      let iterator: string | undefined;
      try {
        if (!firstRun) iterator = await resumeShard(shard);
        // A shard that is already closed on a first run holds only records from before: nothing to read in it.
        else if (ending !== undefined) {
          if (checkpointFile !== undefined) positions.set(shardId, ending);
        } else iterator = checkpointFile === undefined ? await iteratorOf(shardId, 'LATEST') : await skipToEnd(shardId);
      } catch (error) {
        // Listed a moment ago, trimmed since: nothing to read.
        if (!(error instanceof ResourceNotFoundException)) throw error;
      }
      if (iterator !== undefined) iterators.set(shardId, iterator);
    }
    await writeCheckpoint();
  };
  await refreshShards(saved === undefined);

  const subscribers = options.workers.map((subscriber) => ({ ...subscriber, filters: filtersOf(subscriber.worker) }));
  let stopping = false;
  const stopped = () => stopping;
  /** Set when every shard must be opened again (an expired iterator). */
  let reopen = false;
  /** Set when a shard ended: its child shard must be found. */
  let shardEnded = false;
  const loop = (async () => {
    for (let poll = 1; !stopping; poll += 1) {
      let delivered = 0;
      try {
        if (reopen || shardEnded || poll % SHARD_REFRESH_POLLS === 0) {
          await refreshShards();
          reopen = false;
          shardEnded = false;
        }
        for (const [shardId, iterator] of iterators) {
          if (iterator === undefined || stopping) {
            iterators.delete(shardId);
            continue;
          }
          // As the event source mapping reads: up to 1,000 records a call (the filters drop most of them), handed to each
          // worker in batches of its batch size.
          const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: READ_PAGE_LIMIT }));
          iterators.set(shardId, page.NextShardIterator);
          // A shard closed (DynamoDB Local rolls them over as AWS does): look for its child at once, not at the next
          // periodic refresh, which left new records waiting for seconds.
          if (page.NextShardIterator === undefined) shardEnded = true;
          const records = page.Records ?? [];
          let handled = true;
          for (const { worker, handler, filters } of subscribers) {
            const mine = records.filter((record) => matches(filters, record)).map(toLambdaRecord);
            const size = worker.batchSize ?? DEFAULT_STREAM_BATCH_SIZE;
            for (let first = 0; first < mine.length && handled; first += size) {
              handled = await deliver(
                worker,
                handler,
                mine.slice(first, first + size),
                stopped,
                options.retryPauseMs ?? DEFAULT_RETRY_PAUSE_MS,
              );
            }
            delivered += mine.length;
            if (!handled) break;
          }
          // Stopped half-way: the checkpoint stays before these records, and the next run delivers them again.
          if (!handled) break;
          const last = records.at(-1)?.dynamodb?.SequenceNumber;
          if (last !== undefined) {
            positions.set(shardId, last);
            await writeCheckpoint();
          }
        }
      } catch (error) {
        if (stopping) break;
        // After an expired iterator (a long pause, a suspended laptop) every shard is read again from after its
        // last handled record, or from its start when none was: nothing written meanwhile is missed.
        if (error instanceof ExpiredIteratorException) {
          iterators.clear();
          seen.clear();
          reopen = true;
        } else {
          console.error('Stream poller:', error);
        }
      }
      if (delivered === 0) await sleep(options.idleMs ?? 250);
    }
  })();

  return {
    async stop() {
      stopping = true;
      await loop;
      streams.destroy();
    },
  };
}
