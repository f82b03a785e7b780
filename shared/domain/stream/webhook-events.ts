/**
 * The events consumer (docs/design.md "Work after the response"): handed the changes of the items that can be events
 * (the interests of `webhookEventsConsumer` in shared/workers.ts) by the changes reader
 * (functions/workers/stream-changes.ts), it turns each change into a message and queues its deliveries
 * (shared/domain/webhooks/publish.ts `handleChanges`): the batch's messages are written together, each tenant's
 * configuration and endpoints read once per batch. A notification added or re-added also has its emails planned
 * (shared/domain/email/plan.ts): emails ride the same pipeline and queue. A change that fails is reported back, so
 * the event source hands it again and, after its retries, to the dead-letter queue.
 */
import { deliveryQueue } from '../../adapters/queue/delivery-queue';
import { logger } from '../../core/logger';
import type { ItemChange } from '../../db/item-change';
import { notificationAddedOf, planEmailBatch, type NotificationAdded } from '../email/plan';
import { changeOf, type Change } from '../webhooks/events';
import { handleChanges, tenantReader } from '../webhooks/publish';
import { webhookEventsConsumer } from '../../workers';
import { consumerHandler, type Consume } from './dispatch';

export const consume: Consume = async (items) => {
  const failed = new Set<ItemChange>();
  const itemOf = new Map<Change, ItemChange>();
  const addedOf = new Map<NotificationAdded, ItemChange>();
  for (const item of items) {
    try {
      const change = changeOf(item);
      if (change !== undefined) itemOf.set(change, item);
      const added = notificationAddedOf(item);
      if (added !== undefined) addedOf.set(added, item);
    } catch (error) {
      logger.error('Stream record not understood; the stream will retry it.', {
        error,
        sequenceNumber: item.sequenceNumber,
      });
      failed.add(item);
    }
  }
  const queue = deliveryQueue();
  const [unpublished, unplanned] = await Promise.all([
    handleChanges([...itemOf.keys()], queue, tenantReader()),
    planEmailBatch([...addedOf.keys()], queue),
  ]);
  for (const [change, error] of unpublished) {
    const item = itemOf.get(change);
    logger.error('Webhook event not published; the stream will retry it.', {
      error,
      sequenceNumber: item?.sequenceNumber,
    });
    if (item !== undefined) failed.add(item);
  }
  for (const [added, error] of unplanned) {
    const item = addedOf.get(added);
    logger.error('Emails of a notification not planned; the stream will retry it.', {
      error,
      sequenceNumber: item?.sequenceNumber,
    });
    if (item !== undefined) failed.add(item);
  }
  return [...failed];
};

/** The events consumer alone, as a stream handler (tests and the local webhook pipeline). */
export const handler = consumerHandler(webhookEventsConsumer, consume);
