/**
 * The delivery queue (docs/design.md "Work after the response"): work handed from the request path or a worker to
 * the delivery worker, durable, at least once. In AWS an SQS standard queue (shared/adapters/queue/sqs-queue.ts); on the
 * local stack a queue of files under DATA_DIR (shared/adapters/queue/file-queue.ts), polled by local/queue-poller.ts.
 * Both feed the same handler, an SQS handler (SQSEvent in, SQSBatchResponse out).
 */

/** SQS's own limit on DelaySeconds: a longer wait is served in hops (the job carries when it is due). */
export const MAX_DELAY_SECONDS = 900;

export interface QueuedJob {
  /** The job, as JSON text. */
  body: string;
  /** Seconds before the job is handed to the worker: 0 to MAX_DELAY_SECONDS. */
  delaySeconds: number;
}

export interface JobQueue {
  /** Stores every job durably before it resolves; throws when any was not stored. */
  send(jobs: readonly QueuedJob[]): Promise<void>;
}
