/**
 * The delivery worker (docs/design.md "Work after the response"): takes jobs from the delivery queue (SQS in AWS,
 * the file queue on the local stack) and runs each, whatever its kind (shared/domain/delivery/jobs.ts): one attempt
 * of a webhook delivery, one attempt of an email, or one look at a changing CRDT editor. A job that fails (storage unreachable, say) is reported back and comes again after the queue's
 * visibility timeout; after the redrive policy's receives it is in the dead-letter queue.
 */
import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { deliveryQueue } from '../../shared/adapters/queue/delivery-queue';
import type { JobQueue } from '../../shared/adapters/queue/queue';
import { logger, withLogContext } from '../../shared/core/logger';
import { cachedDecrypt } from '../../shared/crypto/encryption';
import { parseJob } from '../../shared/domain/delivery/jobs';
import { deliveryQueueWorker } from '../../shared/workers';

// Every attempt signs with its endpoint's secret (and every SendGrid email uses its key): decrypted once per warm
// process and five minutes, not per attempt.
const decrypt = cachedDecrypt({ maxEntries: 1000, maxAgeMs: 5 * 60 * 1000 });

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const queue = deliveryQueue();
  // The jobs run side by side, each in a log context of its own (shared/core/logger.ts): a line names its worker and
  // job, never another job or a request.
  const failures = await Promise.all(
    event.Records.map((record) =>
      withLogContext({ worker: deliveryQueueWorker.id, messageId: record.messageId }, () => runJob(record, queue)),
    ),
  );
  return { batchItemFailures: failures.filter((failure) => failure !== undefined) };
}

/** One attempt of one job; its message id when it failed, for the queue to hand it out again. */
async function runJob(record: SQSRecord, queue: JobQueue): Promise<SQSBatchItemFailure | undefined> {
  try {
    const job = parseJob(record.body);
    // Each kind of job loads its code with the first job of that kind, not at cold start: an instance that only
    // delivers webhooks never loads the email transports (nodemailer, the SES client) or Yjs.
    if (job.kind === 'deliver')
      await (await import('../../shared/domain/webhooks/delivery')).runDelivery(job, { queue, decrypt });
    else if (job.kind === 'email')
      await (await import('../../shared/domain/email/send')).runEmailJob(job, { queue, decrypt });
    else await (await import('../../shared/domain/webhooks/publish')).emitEditor(job, queue);
    return undefined;
  } catch (error) {
    logger.error('Delivery job failed; the queue will hand it out again.', { error });
    return { itemIdentifier: record.messageId };
  }
}
