/**
 * The local stand-in for Lambda's SQS event source mapping: takes due jobs from the file queue
 * (shared/adapters/queue/file-queue.ts) and calls the worker's SQS handler, the same handler that SQS invokes in AWS, with
 * SQS-shaped records. As the event source mapping does with ReportBatchItemFailures:
 * - a job the handler does not report as failed is deleted; a job it reports in batchItemFailures, or every job of
 *   the batch when it throws or names a job that is not in the batch, is left to come back once its visibility
 *   timeout has passed;
 * - a job received maxReceiveCount times without success goes to the queue's `dead-letter/` folder (the redrive
 *   policy's dead-letter queue), with a log line;
 * - batches run concurrently (jobs are independent; order is not guaranteed, as with a standard queue).
 *
 * A new job wakes the poller at once (a watch on the folder); besides, it looks at the folder at least every
 * `idleMs` and when the earliest delayed job falls due. Jobs survive a restart: whatever was not deleted is handed
 * out again by the next poller on the folder.
 */
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DEFAULT_VISIBILITY_TIMEOUT_MS, fileQueue, type ReceivedJob } from '../shared/adapters/queue/file-queue';

export type QueueHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/** The redrive policy's maxReceiveCount the CDK stack is expected to use; the local default. */
export const DEFAULT_MAX_RECEIVE_COUNT = 10;
export const DEFAULT_QUEUE_BATCH_SIZE = 10;
export const DEFAULT_QUEUE_CONCURRENCY = 8;
export const DEFAULT_QUEUE_IDLE_MS = 100;

export interface QueuePollerOptions {
  /** The file queue's folder (created when missing). */
  dir: string;
  handler: QueueHandler;
  /** Jobs per handler call; default 10, the event source mapping's default for SQS. */
  batchSize?: number;
  /** Handler calls running at once; default 8. */
  concurrency?: number;
  /** Longest pause between looks at the folder when nothing is due; default 100 ms. */
  idleMs?: number;
  /** How long a job handed to the handler stays hidden; default 60 s. Also the handler's time limit in its context. */
  visibilityTimeoutMs?: number;
  /** Receives after which a job that keeps failing goes to the dead-letter folder; default 10. */
  maxReceiveCount?: number;
  /** The worker's name, for the context and the log lines; default the folder's name. */
  functionName?: string;
  /** Where the log lines go; default console.error, as the stream poller's. */
  log?: (message: string) => void;
}

export interface QueuePoller {
  /** Stops taking jobs and resolves once the batches in flight have ended. */
  stop(): Promise<void>;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const result = value ?? fallback;
  if (!Number.isInteger(result) || result < 1)
    throw new RangeError(`Queue poller: ${name} must be a positive integer, got ${result}.`);
  return result;
}

export async function startQueuePoller(options: QueuePollerOptions): Promise<QueuePoller> {
  const dir = resolve(options.dir);
  const batchSize = positive('batchSize', options.batchSize, DEFAULT_QUEUE_BATCH_SIZE);
  const concurrency = positive('concurrency', options.concurrency, DEFAULT_QUEUE_CONCURRENCY);
  const idleMs = positive('idleMs', options.idleMs, DEFAULT_QUEUE_IDLE_MS);
  const visibilityTimeoutMs = positive(
    'visibilityTimeoutMs',
    options.visibilityTimeoutMs,
    DEFAULT_VISIBILITY_TIMEOUT_MS,
  );
  const maxReceiveCount = positive('maxReceiveCount', options.maxReceiveCount, DEFAULT_MAX_RECEIVE_COUNT);
  const functionName = options.functionName ?? basename(dir);
  const log = options.log ?? ((message: string) => console.error(message));
  const eventSourceARN = `arn:aws:sqs:local:000000000000:${basename(dir)}`;

  await mkdir(dir, { recursive: true, mode: 0o700 });
  const queue = fileQueue(dir, { visibilityTimeoutMs });

  let stopping = false;
  /** Set by the folder watch: something changed since the last receive, so do not sleep. */
  let changed = false;
  let wake: (() => void) | undefined;
  const wakeUp = (): void => {
    changed = true;
    wake?.();
  };
  const pause = (ms: number): Promise<void> =>
    new Promise((resolvePause) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        wake = undefined;
        resolvePause();
      }
      wake = done;
    });

  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, { persistent: false }, wakeUp);
    // Without the watch (an unsupported file system), the idle pause alone finds new jobs.
    watcher.on('error', () => {
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    watcher = undefined;
  }

  const toRecord = (job: ReceivedJob, receivedAt: number): SQSRecord => ({
    messageId: job.id,
    receiptHandle: job.receiptHandle,
    body: job.body,
    attributes: {
      ApproximateReceiveCount: String(job.receiveCount),
      SentTimestamp: String(job.sentAt),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(receivedAt),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(job.body, 'utf8').digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion: 'local',
  });

  const context = (): Context => {
    const deadline = Date.now() + visibilityTimeoutMs;
    return {
      functionName,
      awsRequestId: `local-${Date.now()}`,
      getRemainingTimeInMillis: () => deadline - Date.now(),
    } as Context;
  };

  const deadLetter = async (job: ReceivedJob): Promise<void> => {
    const path = await queue.deadLetter(job);
    if (path !== undefined)
      log(`Queue worker ${functionName}: job ${job.id} failed ${job.receiveCount} time(s); moved to ${path}.`);
  };

  /** One handler call; never rejects (a failure is logged and the jobs come back after the visibility timeout). */
  const runBatch = async (jobs: readonly ReceivedJob[]): Promise<void> => {
    const receivedAt = Date.now();
    const ids = new Set(jobs.map((job) => job.id));
    let failed: ReadonlySet<string>;
    try {
      const response = await options.handler({ Records: jobs.map((job) => toRecord(job, receivedAt)) }, context());
      const reported = (response?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier);
      if (reported.every((id) => ids.has(id))) failed = new Set(reported);
      else {
        // As the event source mapping does: an identifier that is not in the batch fails the whole batch.
        log(
          `Queue worker ${functionName}: batchItemFailures names a job that is not in the batch; the whole batch is retried.`,
        );
        failed = ids;
      }
    } catch (error) {
      log(
        `Queue worker ${functionName} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      failed = ids;
    }
    await Promise.all(
      jobs.map(async (job) => {
        try {
          if (!failed.has(job.id)) await queue.ack(job);
          // Its last receive: to the dead-letter folder now, rather than after one more visibility timeout.
          else if (job.receiveCount >= maxReceiveCount) await deadLetter(job);
        } catch (error) {
          log(`Queue worker ${functionName}: could not settle job ${job.id}: ${String(error)}`);
        }
      }),
    );
  };

  const inFlight = new Set<Promise<void>>();
  const start = (jobs: readonly ReceivedJob[]): void => {
    const batch = runBatch(jobs).finally(() => {
      inFlight.delete(batch);
    });
    inFlight.add(batch);
  };

  const loop = (async () => {
    while (!stopping) {
      if (inFlight.size >= concurrency) {
        await Promise.race(inFlight);
        continue;
      }
      changed = false;
      let received: ReceivedJob[];
      try {
        received = await queue.receive(batchSize * (concurrency - inFlight.size));
      } catch (error) {
        log(`Queue poller ${functionName}: ${String(error)}`);
        await pause(idleMs);
        continue;
      }
      // A job whose last lease ran out unsettled (its handler never answered: a killed process) after its last
      // receive goes to the dead-letter folder instead of being handed out once more than the policy allows.
      const overdue = received.filter((job) => job.receiveCount > maxReceiveCount);
      await Promise.all(overdue.map(deadLetter));
      const jobs = received.filter((job) => job.receiveCount <= maxReceiveCount);
      for (let index = 0; index < jobs.length; index += batchSize) start(jobs.slice(index, index + batchSize));
      if (received.length > 0 || changed || stopping) continue;
      const nextDue = queue.nextDueAt();
      await pause(Math.max(0, Math.min(idleMs, nextDue === undefined ? idleMs : nextDue - Date.now())));
    }
    await Promise.all(inFlight);
  })();

  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      watcher?.close();
    },
  };
}
