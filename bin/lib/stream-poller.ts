/**
 * The local stand-in for Lambda's DynamoDB event source mapping: polls the table's stream on DynamoDB Local and
 * hands the records each worker of the worker table is filtered for to that worker's handler, the same handler
 * that runs in AWS. Like the event source mapping it delivers records of a shard in order, one batch at a time,
 * retries the records a handler reports as failed (batchItemFailures) and, after the last retry, drops them with
 * a log line where AWS would send them to the dead-letter queue.
 *
 * New shards are read from their start; the shards open at start-up from "now" (LATEST), so records of an earlier
 * run are not replayed: once this resolves, writes reach the workers, and the stack wakes the work that was in
 * progress when it stopped.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { matchesStreamFilter, type Worker } from '../../shared/workers';

export type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<DynamoDBBatchResponse>;

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  workers: ReadonlyArray<{ worker: Worker; handler: StreamHandler }>;
  /** Pause between polls that found nothing. */
  idleMs?: number;
}

export interface StreamPoller {
  stop(): Promise<void>;
}

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
/** Lambda's own limit for a function run: what a worker is told it has left. */
const WORKER_TIME_MS = 15 * 60 * 1000;
const RETRY_ATTEMPTS = 10;
const RETRY_PAUSE_MS = 1000;
/** Shards are listed again every this many polls (DynamoDB Local opens new ones over time). */
const SHARD_REFRESH_POLLS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The worker's event filter, as the event source mapping applies it (shared/workers.ts). */
function matches(worker: Worker, record: StreamRecord): boolean {
  const { Keys, NewImage } = record.dynamodb ?? {};
  return matchesStreamFilter(worker.filters, { eventName: record.eventName, keys: Keys, newImage: NewImage });
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

function workerContext(worker: Worker): Context {
  const deadline = Date.now() + WORKER_TIME_MS;
  return {
    functionName: worker.id,
    awsRequestId: `local-${Date.now()}`,
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as Context;
}

/** Delivers records to a worker, retrying the ones it reports as failed; gives up on them after the last retry. */
async function deliver(worker: Worker, handler: StreamHandler, records: DynamoDBRecord[], stopped: () => boolean): Promise<void> {
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
    if (pending.length === 0 || stopped()) return;
    if (attempt >= RETRY_ATTEMPTS) {
      console.error(`Stream worker ${worker.id} gave up on ${pending.length} record(s) after ${attempt} attempts.`);
      return;
    }
    await sleep(RETRY_PAUSE_MS);
  }
}

export async function startStreamPoller(options: StreamPollerOptions): Promise<StreamPoller> {
  const dynamodb = new DynamoDBClient({ endpoint: options.endpoint, region: 'local', credentials: CREDENTIALS });
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: 'local', credentials: CREDENTIALS });
  const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: options.tableName }));
  dynamodb.destroy();
  const streamArn = Table?.LatestStreamArn;
  if (streamArn === undefined) throw new Error(`Table ${options.tableName} has no stream.`);

  /** Open shards and where to read next; a closed shard leaves the map once read to its end. */
  const iterators = new Map<string, string | undefined>();
  const seen = new Set<string>();
  const refreshShards = async (startingAt: 'LATEST' | 'TRIM_HORIZON'): Promise<void> => {
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of StreamDescription?.Shards ?? []) {
      const shardId = shard.ShardId;
      if (shardId === undefined || seen.has(shardId)) continue;
      seen.add(shardId);
      // A shard that is already closed at start-up holds only records from before: nothing to read in it.
      if (startingAt === 'LATEST' && shard.SequenceNumberRange?.EndingSequenceNumber !== undefined) continue;
      const { ShardIterator } = await streams.send(
        new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: startingAt }),
      );
      iterators.set(shardId, ShardIterator);
    }
  };
  await refreshShards('LATEST');

  let stopping = false;
  const stopped = () => stopping;
  const loop = (async () => {
    for (let poll = 1; !stopping; poll += 1) {
      let delivered = 0;
      try {
        if (poll % SHARD_REFRESH_POLLS === 0) await refreshShards('TRIM_HORIZON');
        for (const [shardId, iterator] of iterators) {
          if (iterator === undefined || stopping) {
            iterators.delete(shardId);
            continue;
          }
          const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 100 }));
          iterators.set(shardId, page.NextShardIterator);
          const records = page.Records ?? [];
          for (const { worker, handler } of options.workers) {
            const mine = records.filter((record) => matches(worker, record)).map(toLambdaRecord);
            if (mine.length > 0) await deliver(worker, handler, mine, stopped);
            delivered += mine.length;
          }
        }
      } catch (error) {
        if (stopping) break;
        // After an expired iterator (a long pause, a suspended laptop) every shard is read again from its start:
        // workers ignore records of work that has ended, and nothing written meanwhile is missed.
        if (error instanceof ExpiredIteratorException) {
          iterators.clear();
          seen.clear();
          await refreshShards('TRIM_HORIZON');
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
