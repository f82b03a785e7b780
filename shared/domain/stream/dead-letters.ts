/**
 * Replaying the stream's dead letters (shared/db/dead-letter.ts), the operator's `npm run admin -- replay-dead-letters`:
 * each dead letter's record is decoded again and handed to the consumer that gave up on it (or, for a record the
 * reader could not decode, to every consumer of its reader that wants it), as the reader would have. A replay that
 * succeeds deletes the dead letter; one that fails again keeps it, counted, with the new error. Consumers are
 * idempotent, so a change replayed after it was handled some other way changes nothing.
 */
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import {
  currentItemOf,
  deleteDeadLetter,
  EVERY_CONSUMER,
  listDeadLetters,
  recordReplayFailure,
  type DeadLetter,
} from '../../db/dead-letter';
import { itemChange, wants } from '../../db/item-change';
import type { StreamConsumer, Worker } from '../../workers';
import { UNTIMED, type Consume } from './dispatch';

/** A deployed reader and its consumers' code (functions/workers/*.ts `consumers`). */
export interface ReplayTarget {
  readonly worker: Pick<Worker, 'id' | 'consumers'>;
  readonly consumers: Readonly<Record<string, Consume>>;
}

export interface ReplayOutcome {
  readonly letter: DeadLetter;
  readonly status: 'replayed' | 'failed' | 'listed';
  readonly error?: string;
}

const PAGE = 25;

/** The record of a dead letter, with the item as it is now in place of images that were too large to keep. */
async function recordOf(letter: DeadLetter): Promise<DynamoDBRecord> {
  if (!letter.imagesOmitted) return letter.record;
  const keys = letter.record.dynamodb?.Keys;
  const item = keys === undefined ? undefined : await currentItemOf(unmarshall(keys as Record<string, AttributeValue>));
  if (item === undefined)
    throw new Error('The item this dead letter is about is gone, and its images were too large to keep.');
  return {
    ...letter.record,
    dynamodb: {
      ...letter.record.dynamodb,
      NewImage: marshall(item, { removeUndefinedValues: true }) as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'],
    },
  };
}

/** The consumers a dead letter goes back to, with their code. Throws when the deployment has no such consumer. */
function consumersOf(
  letter: DeadLetter,
  targets: readonly ReplayTarget[],
): Array<{ consumer: StreamConsumer; consume: Consume }> {
  const all = targets.flatMap((target) =>
    target.worker.consumers.map((consumer) => ({ target, consumer, consume: target.consumers[consumer.id] })),
  );
  const chosen =
    letter.consumerId === EVERY_CONSUMER
      ? all.filter(
          ({ target }) =>
            target.worker.id === letter.readerId ||
            target.worker.consumers.some((consumer) => consumer.id === letter.readerId),
        )
      : all.filter(({ consumer }) => consumer.id === letter.consumerId);
  if (chosen.length === 0)
    throw new Error(`No consumer ${letter.consumerId} (reader ${letter.readerId}) in this deployment.`);
  return chosen.map(({ consumer, consume }) => {
    if (consume === undefined) throw new Error(`No code for the consumer ${consumer.id}.`);
    return { consumer, consume };
  });
}

async function replayOne(letter: DeadLetter, targets: readonly ReplayTarget[]): Promise<void> {
  const change = itemChange(await recordOf(letter));
  for (const { consumer, consume } of consumersOf(letter, targets)) {
    if (letter.consumerId === EVERY_CONSUMER && !wants(consumer.changes, change)) continue;
    const unhandled = await consume([change], UNTIMED);
    if (unhandled.length > 0)
      throw new Error(`The consumer ${consumer.id} reported the change as failed again (see its log lines).`);
  }
}

/**
 * Replays every dead letter (or only those of `consumerId`), one at a time, calling `report` with each outcome;
 * `dryRun` lists them without replaying. Throws only when the dead letters cannot be read.
 */
export async function replayDeadLetters(
  targets: readonly ReplayTarget[],
  options: { dryRun?: boolean; consumerId?: string; report?: (outcome: ReplayOutcome) => void } = {},
): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  const report = (outcome: ReplayOutcome) => {
    outcomes.push(outcome);
    options.report?.(outcome);
  };
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await listDeadLetters(PAGE, cursor);
    cursor = page.cursor;
    for (const letter of page.letters) {
      if (options.consumerId !== undefined && letter.consumerId !== options.consumerId) continue;
      if (options.dryRun === true) {
        report({ letter, status: 'listed' });
        continue;
      }
      try {
        await replayOne(letter, targets);
        await deleteDeadLetter(letter);
        report({ letter, status: 'replayed' });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        await recordReplayFailure(letter, message);
        report({ letter, status: 'failed', error: message });
      }
    }
  } while (cursor !== undefined);
  return outcomes;
}
