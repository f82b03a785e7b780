/**
 * The event pipeline of the local stack, run inside a connected test file against its own table: the stream
 * poller feeding the stream workers, and the queue poller feeding the delivery worker from a file queue in a
 * temporary folder, each under its worker's grants. The receiver is in ./webhook-receiver.ts.
 *
 * test/support/table-per-file.ts sets WEBHOOK_* and DELIVERY_QUEUE_DIR before the handlers load.
 */
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { startQueuePoller } from '../../local/queue-poller';
import { runAsWorker } from '../../local/grant-check';
import { startStreamPoller } from '../../local/stream-poller';
import { handler as deliveryHandler } from '../../functions/workers/delivery';
import { handler as eventsHandler } from '../../shared/domain/stream/webhook-events';
import { handler as migrationHandler } from '../../functions/workers/document-migration';
import { documentMigrationWorker, deliveryQueueWorker, webhookEventsConsumer } from '../../shared/workers';

export interface Pipeline {
  stop(): Promise<void>;
}

/** `migrations: false` leaves migrations pending (the events worker still sees them start). */
export async function startPipeline(options: { migrations?: boolean } = {}): Promise<Pipeline> {
  const migrations = options.migrations ?? true;
  const stream = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT as string,
    tableName: process.env.TABLE_NAME as string,
    idleMs: 50,
    workers: [
      ...(migrations
        ? [
            {
              worker: documentMigrationWorker,
              handler: (event: DynamoDBStreamEvent, context: Context) =>
                runAsWorker(documentMigrationWorker, () => migrationHandler(event, context)),
            },
          ]
        : []),
      {
        worker: webhookEventsConsumer,
        handler: (event: DynamoDBStreamEvent) => runAsWorker(webhookEventsConsumer, () => eventsHandler(event)),
      },
    ],
  });
  const queue = await startQueuePoller({
    dir: process.env.DELIVERY_QUEUE_DIR as string,
    handler: (event) => runAsWorker(deliveryQueueWorker, () => deliveryHandler(event)),
    idleMs: 25,
  });
  return {
    async stop() {
      await stream.stop();
      await queue.stop();
    },
  };
}

export { startReceiver, typeOf, type ReceivedRequest, type Receiver, type Script } from './webhook-receiver';
