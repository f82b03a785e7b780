/**
 * The events worker (docs/design.md "Work after the response"): woken by the table's stream for the items that
 * can be events (the filters of `webhookEventsWorker` in shared/workers.ts), it turns each change into a message
 * and queues its deliveries (shared/domain/webhooks/publish.ts `handleChanges`): the batch's messages are written
 * together, each tenant's configuration and endpoints read once per batch. A notification added or re-added also
 * has its emails planned (shared/domain/email/plan.ts): emails ride the same pipeline and queue. A record that fails is reported back, so the
 * event source retries it (bisecting the batch in AWS) and, after its retries, hands it to the dead-letter queue.
 */
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { deliveryQueue } from '../../shared/adapters/queue/delivery-queue';
import { logger, withLogContext } from '../../shared/core/logger';
import { itemChange } from '../../shared/db/item-change';
import { notificationAddedOf, planEmailBatch, type NotificationAdded } from '../../shared/domain/email/plan';
import { changeOf, type Change } from '../../shared/domain/webhooks/events';
import { handleChanges, tenantReader } from '../../shared/domain/webhooks/publish';
import { webhookEventsWorker } from '../../shared/workers';

// Each call in a log context of its own (shared/core/logger.ts): its lines name the worker, never a request.
export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> =>
  withLogContext({ worker: webhookEventsWorker.id }, () => publishChanges(event));

async function publishChanges(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const failed = new Set<DynamoDBRecord>();
  const recordOf = new Map<Change, DynamoDBRecord>();
  const addedOf = new Map<NotificationAdded, DynamoDBRecord>();
  for (const record of event.Records) {
    try {
      const item = itemChange(record);
      const change = changeOf(item);
      if (change !== undefined) recordOf.set(change, record);
      const added = notificationAddedOf(item);
      if (added !== undefined) addedOf.set(added, record);
    } catch (error) {
      logger.error('Stream record not understood; the stream will retry it.', { error, sequenceNumber: record.dynamodb?.SequenceNumber });
      failed.add(record);
    }
  }
  const queue = deliveryQueue();
  const [unpublished, unplanned] = await Promise.all([handleChanges([...recordOf.keys()], queue, tenantReader()), planEmailBatch([...addedOf.keys()], queue)]);
  for (const [change, error] of unpublished) {
    const record = recordOf.get(change);
    logger.error('Webhook event not published; the stream will retry it.', { error, sequenceNumber: record?.dynamodb?.SequenceNumber });
    if (record !== undefined) failed.add(record);
  }
  for (const [added, error] of unplanned) {
    const record = addedOf.get(added);
    logger.error('Emails of a notification not planned; the stream will retry it.', { error, sequenceNumber: record?.dynamodb?.SequenceNumber });
    if (record !== undefined) failed.add(record);
  }
  // In stream order: the event source retries from the first failed record on.
  return { batchItemFailures: event.Records.filter((record) => failed.has(record)).map((record) => ({ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' })) };
}
