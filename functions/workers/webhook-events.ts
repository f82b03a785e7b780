/**
 * The events worker (docs/design.md "Work after the response"): woken by the table's stream for the items that
 * can be events (the filters of `webhookEventsWorker` in shared/workers.ts), it turns each change into a message
 * and queues its deliveries (shared/domain/webhooks/publish.ts), several changes at once, reading each tenant's
 * configuration and endpoints once per batch. A record that fails is reported back, so the
 * event source retries it (bisecting the batch in AWS) and, after its retries, hands it to the dead-letter queue.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { deliveryQueue } from '../../shared/core/delivery-queue';
import { logger } from '../../shared/core/logger';
import { changeOf, type ItemChange } from '../../shared/domain/webhooks/events';
import { handleChange, tenantReader } from '../../shared/domain/webhooks/publish';

type Image = Record<string, AttributeValue>;

function itemChange(record: DynamoDBRecord): ItemChange {
  const image = (value: unknown) => (value === undefined ? undefined : unmarshall(value as Image));
  return {
    eventName: record.eventName ?? 'MODIFY',
    newImage: image(record.dynamodb?.NewImage),
    oldImage: image(record.dynamodb?.OldImage),
  };
}

/** Records handled at once: each is independent (delivery order is not guaranteed, docs/decisions.md §11). */
const CONCURRENCY = 16;

export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const queue = deliveryQueue();
  const tenant = tenantReader();
  const failed = new Set<DynamoDBRecord>();
  const pending = [...event.Records];
  const work = async (): Promise<void> => {
    for (let record = pending.shift(); record !== undefined; record = pending.shift()) {
      try {
        const change = changeOf(itemChange(record));
        if (change !== undefined) await handleChange(change, queue, tenant);
      } catch (error) {
        logger.error('Webhook event not published; the stream will retry it.', { error, sequenceNumber: record.dynamodb?.SequenceNumber });
        failed.add(record);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, work));
  // In stream order: the event source retries from the first failed record on.
  return { batchItemFailures: event.Records.filter((record) => failed.has(record)).map((record) => ({ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' })) };
}
