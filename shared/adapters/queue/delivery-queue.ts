/**
 * The delivery queue of this process (shared/adapters/queue/queue.ts), chosen by configuration: the SQS queue in AWS
 * (DELIVERY_QUEUE_URL), the file queue on the local stack and in tests (DELIVERY_QUEUE_DIR). Built once.
 */
import { sqsQueue } from './sqs-queue';
import { config } from '../../core/config';
import { fileQueue } from './file-queue';
import type { JobQueue } from './queue';

let queue: JobQueue | undefined;

/** Throws when neither DELIVERY_QUEUE_URL nor DELIVERY_QUEUE_DIR is set (a function deployed without its queue). */
export function deliveryQueue(): JobQueue {
  if (queue !== undefined) return queue;
  if (config.deliveryQueueUrl !== undefined) queue = sqsQueue(config.deliveryQueueUrl);
  else if (config.deliveryQueueDir !== undefined) queue = fileQueue(config.deliveryQueueDir);
  else {
    throw new Error(
      'No delivery queue is configured: set DELIVERY_QUEUE_URL (the SQS queue, in AWS) or DELIVERY_QUEUE_DIR (the folder of the local file queue).',
    );
  }
  return queue;
}
