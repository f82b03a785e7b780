/**
 * A reader of the table's stream (docs/architecture.md "The stream and the delivery pipeline"): decodes each record
 * once (shared/db/item-change.ts) and hands each declared consumer (shared/workers.ts) the changes it declared,
 * every consumer side by side and on every record of the batch, whatever another consumer does.
 *
 * A consumer reports the changes it failed on (or throws: all of its changes failed). Those are retried here, each
 * change alone (so one bad change cannot fail its batch-mates again), a bounded number of times with short pauses
 * (`attempts` of the consumer, else DEFAULT_CONSUMER_ATTEMPTS); what still fails is written whole to the dead
 * letters (shared/db/dead-letter.ts), which an alarm watches and an operator replays, and the record counts as
 * handled. So one bad record or one tenant's fault delays its batch by at most those pauses, never holds up the
 * shard's later records through the stream's own retries, and is never dropped: Lambda's on-failure destination
 * would get only the shard and a sequence range, not the record. Only when the dead letters cannot be written
 * either (the table refuses) is the record reported back (batchItemFailures) for the event source to hand again.
 * Every consumer is idempotent, so a change handed twice is harmless.
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
export const UNTIMED = { getRemainingTimeInMillis: () => 15 * 60 * 1000 } as Context;

/** Attempts at a change, in one invocation, before it goes to the dead letters: a passing fault gets two more. */
export const DEFAULT_CONSUMER_ATTEMPTS = 3;
/** The pause before each retry (the last repeats): short, since the shard's next batch waits for this one. */
export const RETRY_PAUSES_MS: readonly number[] = [250, 1000];
/** No retry starts with less time than this left in the invocation: the dead letters must still be written. */
const RETRY_TIME_MARGIN_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

/** What a consumer could not handle after its attempts, and the last reason known. */
interface Unhandled {
  changes: readonly ItemChange[];
  error: string;
}

/**
 * Hands `changes` to `consume`, and the failed ones again, each alone, until they succeed or `attempts` ran out.
 * Never throws.
 */
async function consumeWithRetries(
  run: (changes: readonly ItemChange[]) => Promise<readonly ItemChange[]>,
  changes: readonly ItemChange[],
  attempts: number,
  context: Context,
): Promise<Unhandled> {
  const once = async (batch: readonly ItemChange[]): Promise<Unhandled> => {
    try {
      const failed = await run(batch);
      return { changes: failed, error: 'The consumer reported the change as failed (see its log lines).' };
    } catch (error) {
      logger.error('Stream consumer failed on its changes.', { error, changes: batch.length });
      return { changes: batch, error: describe(error) };
    }
  };
  let unhandled = await once(changes);
  for (
    let attempt = 2;
    attempt <= attempts && unhandled.changes.length > 0 && context.getRemainingTimeInMillis() > RETRY_TIME_MARGIN_MS;
    attempt += 1
  ) {
    await sleep(RETRY_PAUSES_MS[Math.min(attempt - 2, RETRY_PAUSES_MS.length - 1)]);
    // One after another, in stream order: two changes of one item (a migration's, an editor's) never run at once.
    const results: Unhandled[] = [];
    for (const change of unhandled.changes) results.push(await once([change]));
    const failed = results.filter((result) => result.changes.length > 0);
    unhandled = { changes: failed.flatMap((result) => result.changes), error: failed.at(-1)?.error ?? unhandled.error };
  }
  return unhandled;
}

export function streamHandler<W extends Worker>(worker: W, consumers: ConsumersOf<W>, around: AroundConsumer = direct) {
  const consumeOf = (consumer: StreamConsumer): Consume => {
    const consume = (consumers as Record<string, Consume | undefined>)[consumer.id];
    if (consume === undefined)
      throw new Error(`Stream reader ${worker.id} has no code for its consumer ${consumer.id}.`);
    return consume;
  };
  const declared = worker.consumers.map((consumer) => ({ consumer, consume: consumeOf(consumer) }));

  // The context is optional for callers that wake consumers of short work directly (tests).
  return (event: DynamoDBStreamEvent, context: Context = UNTIMED): Promise<DynamoDBBatchResponse> =>
    withLogContext({ worker: worker.id }, async () => {
      const failed = new Set<string>();
      /** Records given up on, kept as dead letters; a record whose dead letter cannot be written is reported back. */
      const keep = async (consumerId: string, records: readonly DynamoDBRecord[], error: string): Promise<void> => {
        if (records.length === 0) return;
        try {
          // Loaded when first needed: the table's client reads its configuration when loaded, and the local stack
          // loads this module before it sets that configuration.
          const { putDeadLetters } = await import('../../db/dead-letter');
          await putDeadLetters(worker.id, consumerId, records, error);
          // The figure an alarm counts (infra: a metric filter on `deadLetters`).
          logger.error(
            'Stream changes given up on and kept as dead letters; replay them with `npm run admin -- replay-dead-letters`.',
            { deadLetters: records.length, consumerId, error },
          );
        } catch (cause) {
          logger.error('Dead letters not written; the stream will hand the records again.', {
            error: cause,
            consumerId,
          });
          for (const record of records) failed.add(sequenceOf(record));
        }
      };
      const recordOf = new Map<ItemChange, DynamoDBRecord>();
      const changes: ItemChange[] = [];
      const undecoded: DynamoDBRecord[] = [];
      let undecodedError = '';
      for (const record of event.Records) {
        try {
          const change = itemChange(record);
          changes.push(change);
          recordOf.set(change, record);
        } catch (error) {
          logger.error('Stream record not understood.', { error, sequenceNumber: record.dynamodb?.SequenceNumber });
          undecoded.push(record);
          undecodedError = describe(error);
        }
      }
      await keep('*', undecoded, undecodedError);
      await Promise.all(
        declared.map(({ consumer, consume }) => {
          const mine = changes.filter((change) => wants(consumer.changes, change));
          if (mine.length === 0) return Promise.resolve();
          // Each consumer in a log context of its own (shared/core/logger.ts): its lines name it.
          return withLogContext({ worker: worker.id, consumer: consumer.id }, async () => {
            const unhandled = await consumeWithRetries(
              (batch) => around(consumer, () => consume(batch, context)),
              mine,
              consumer.attempts ?? DEFAULT_CONSUMER_ATTEMPTS,
              context,
            );
            const records = unhandled.changes.flatMap((change) => recordOf.get(change) ?? []);
            await keep(consumer.id, records, unhandled.error);
          });
        }),
      );
      // In stream order: the event source retries from the first failed record on.
      return {
        batchItemFailures: event.Records.filter((record) => failed.has(sequenceOf(record))).map((record) => ({
          itemIdentifier: sequenceOf(record),
        })),
      };
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
