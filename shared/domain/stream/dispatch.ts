/**
 * A reader of the table's stream (docs/architecture.md "The stream and the delivery pipeline"): decodes each record
 * once (shared/db/item-change.ts) and hands each declared consumer (shared/workers.ts) the changes it declared,
 * every consumer side by side and on every record of the batch, whatever another consumer does.
 *
 * A consumer reports the changes it failed on (or throws: all of its changes failed). The reader reports back the
 * records any consumer failed on, in stream order, so the event source retries from the first of them, and after
 * its retries hands them to the reader's dead-letter queue. A retry hands the records to every consumer again: the
 * ones that succeeded see them twice, which they must take (every consumer is idempotent). So a consumer that fails
 * loses nothing of another's (each ran on the whole batch), and holds up the shard's later records only until its
 * own retries end.
 */
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { logger, withLogContext } from '../../core/logger';
import { itemChange, wants, type ItemChange } from '../../db/item-change';
import type { StreamConsumer, Worker } from '../../workers';

/** A consumer's code: handles its changes, and answers those it failed on (the stream hands them again). */
export type Consume = (changes: readonly ItemChange[], context: Context) => Promise<readonly ItemChange[]>;

/** The `consume` of each consumer of a reader, by id: the type asks for every declared one. */
export type ConsumersOf<W extends Worker> = { readonly [K in W['consumers'][number]['id']]: Consume };

/** Runs a consumer's call; the local stack checks its DynamoDB and KMS calls against its own grants there. */
export type AroundConsumer = <T>(consumer: StreamConsumer, fn: () => Promise<T>) => Promise<T>;

const direct: AroundConsumer = (_, fn) => fn();

/** A call's context when none is given: Lambda's longest run ahead. */
const UNTIMED = { getRemainingTimeInMillis: () => 15 * 60 * 1000 } as Context;

export function streamHandler<W extends Worker>(worker: W, consumers: ConsumersOf<W>, around: AroundConsumer = direct) {
  const consumeOf = (consumer: StreamConsumer): Consume => {
    const consume = (consumers as Record<string, Consume | undefined>)[consumer.id];
    if (consume === undefined) throw new Error(`Stream reader ${worker.id} has no code for its consumer ${consumer.id}.`);
    return consume;
  };
  const declared = worker.consumers.map((consumer) => ({ consumer, consume: consumeOf(consumer) }));

  // The context is optional for callers that wake consumers of short work directly (tests).
  return (event: DynamoDBStreamEvent, context: Context = UNTIMED): Promise<DynamoDBBatchResponse> =>
    withLogContext({ worker: worker.id }, async () => {
      const failed = new Set<string>();
      const changes: ItemChange[] = [];
      for (const record of event.Records) {
        try {
          changes.push(itemChange(record));
        } catch (error) {
          logger.error('Stream record not understood; the stream will retry it.', { error, sequenceNumber: record.dynamodb?.SequenceNumber });
          failed.add(sequenceOf(record));
        }
      }
      await Promise.all(
        declared.map(({ consumer, consume }) => {
          const mine = changes.filter((change) => wants(consumer.changes, change));
          if (mine.length === 0) return undefined;
          // Each consumer in a log context of its own (shared/core/logger.ts): its lines name it.
          return withLogContext({ worker: worker.id, consumer: consumer.id }, async () => {
            let unhandled: readonly ItemChange[];
            try {
              unhandled = await around(consumer, () => consume(mine, context));
            } catch (error) {
              logger.error('Stream consumer failed; the stream will hand it its changes again.', { error });
              unhandled = mine;
            }
            for (const change of unhandled) failed.add(change.sequenceNumber);
          });
        }),
      );
      // In stream order: the event source retries from the first failed record on.
      return { batchItemFailures: event.Records.filter((record) => failed.has(sequenceOf(record))).map((record) => ({ itemIdentifier: sequenceOf(record) })) };
    });
}

const sequenceOf = (record: DynamoDBRecord) => record.dynamodb?.SequenceNumber ?? '';

/**
 * A stream handler for one consumer alone, decoding as a reader does: for tests and the local pipeline that wake
 * one consumer; deployed readers are built with `streamHandler`.
 */
export function consumerHandler(consumer: StreamConsumer, consume: Consume, around?: AroundConsumer) {
  const solo: Worker = { id: consumer.id, entry: '', consumers: [consumer], summary: consumer.summary };
  return streamHandler(solo, { [consumer.id]: consume } as ConsumersOf<Worker>, around);
}
