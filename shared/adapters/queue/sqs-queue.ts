/**
 * The delivery queue in AWS (shared/adapters/queue/queue.ts): an SQS standard queue, written with SendMessageBatch. The SQS
 * client is built once per process, on first use, with the function's role.
 */
import {
  SendMessageBatchCommand,
  SQSClient,
  type BatchResultErrorEntry,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { MAX_DELAY_SECONDS, type JobQueue, type QueuedJob } from './queue';

/** What the queue needs of an SQS client: the SDK's SQSClient, or a stand-in in tests. */
export interface SqsBatchSender {
  send(command: SendMessageBatchCommand): Promise<SendMessageBatchCommandOutput>;
}

export interface SqsQueue extends JobQueue {
  readonly queueUrl: string;
}

/** SendMessageBatch's limit on entries. */
const BATCH_ENTRIES = 10;
/**
 * A batch's bodies together stay under 256 KiB, SQS's payload limit before it was raised to 1 MiB: safe on every
 * queue. A larger body travels alone (SQS refuses it when it is over the queue's own limit).
 */
const BATCH_BYTES = 256 * 1024;
/** Sends of an entry SQS reported as failed for a reason of its own (SenderFault false), the first one included. */
const ENTRY_ATTEMPTS = 4;
const RETRY_PAUSE_MS = 100;

let client: SQSClient | undefined;

/** The process's SQS client (the SDK's default region and credentials: the function's own in Lambda). */
export function sqsClient(): SQSClient {
  client ??= new SQSClient({ maxAttempts: 4 });
  return client;
}

/** Some jobs could not be stored; the others of the same send were. */
export class QueueSendError extends Error {
  constructor(readonly failures: readonly BatchResultErrorEntry[]) {
    const first = failures[0];
    super(
      `${failures.length} job(s) could not be sent to the queue: ${first?.Code ?? 'unknown'}${first?.Message ? ` (${first.Message})` : ''}.`,
    );
    this.name = 'QueueSendError';
  }
}

function checkDelay(delaySeconds: number): void {
  if (!Number.isInteger(delaySeconds) || delaySeconds < 0 || delaySeconds > MAX_DELAY_SECONDS) {
    throw new RangeError(
      `An SQS job's delaySeconds must be an integer from 0 to ${MAX_DELAY_SECONDS}, got ${delaySeconds}.`,
    );
  }
}

/** Groups entries into batches of at most 10 entries and BATCH_BYTES of bodies, in order. */
function batchesOf(entries: readonly SendMessageBatchRequestEntry[]): SendMessageBatchRequestEntry[][] {
  const batches: SendMessageBatchRequestEntry[][] = [];
  let current: SendMessageBatchRequestEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = Buffer.byteLength(entry.MessageBody ?? '', 'utf8');
    if (current.length === BATCH_ENTRIES || (current.length > 0 && bytes + size > BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The SQS queue at `queueUrl`. send() resolves once SQS has stored every job; entries SQS reports as failed for a
 * reason of its own are sent again a few times. It throws a RangeError before sending anything when a delay is not
 * 0–900 s, a QueueSendError when entries are still failed (or SQS refused them as malformed), and what the client
 * throws when a request fails as a whole; jobs of other batches may have been stored then (at least once: the
 * caller retries, and the worker takes a job twice without harm).
 */
export function sqsQueue(queueUrl: string, sender: SqsBatchSender = sqsClient()): SqsQueue {
  /** Sends one batch; resolves with the entries that failed for good. */
  async function sendBatch(batch: readonly SendMessageBatchRequestEntry[]): Promise<BatchResultErrorEntry[]> {
    let pending = batch;
    const permanent: BatchResultErrorEntry[] = [];
    for (let attempt = 1; ; attempt += 1) {
      const output = await sender.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [...pending] }));
      const failed = output.Failed ?? [];
      // A sender fault (a malformed entry) fails the same way every time: not sent again.
      permanent.push(...failed.filter((failure) => failure.SenderFault === true));
      const retryable = failed.filter((failure) => failure.SenderFault !== true);
      const retryIds = new Set(retryable.map((failure) => failure.Id));
      pending = pending.filter((entry) => retryIds.has(entry.Id));
      if (pending.length === 0) return permanent;
      if (attempt >= ENTRY_ATTEMPTS) return [...permanent, ...retryable];
      await sleep(RETRY_PAUSE_MS * attempt);
    }
  }

  return {
    queueUrl,
    async send(jobs: readonly QueuedJob[]): Promise<void> {
      for (const job of jobs) checkDelay(job.delaySeconds);
      const entries = jobs.map((job, index) => ({
        Id: String(index),
        MessageBody: job.body,
        DelaySeconds: job.delaySeconds,
      }));
      const results = await Promise.all(batchesOf(entries).map(sendBatch));
      const failures = results.flat();
      if (failures.length > 0) throw new QueueSendError(failures);
    },
  };
}
