/**
 * Per-record isolation in a stream reader (shared/domain/stream/dispatch.ts, issue 29 item 6): a change a consumer
 * keeps failing on is retried alone and then kept as a dead letter, whole, while its neighbours in the batch and the
 * other consumers' changes are handled once and nothing is reported back to the stream (which would hold up the
 * shard's later records behind its retries). The dead letter replays into the consumer once the cause is gone.
 *
 * @table-stream
 */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { listDeadLetters, type DeadLetter } from '../../shared/db/dead-letter';
import { DEFAULT_CONSUMER_ATTEMPTS, streamHandler, type Consume } from '../../shared/domain/stream/dispatch';
import { replayDeadLetters } from '../../shared/domain/stream/dead-letters';
import type { Worker } from '../../shared/workers';
import { startStreamPoller } from '../../local/stream-poller';
import { uniqueId } from '../support/ids';
import { eventually } from '../support/wait';

/** A reader with two consumers of the same changes, named for this test (dead letters carry the names). */
function readerOf(id: string) {
  const changes = [{ kind: 'migration' }] as const;
  return {
    id,
    entry: 'test',
    consumers: [
      { id: `${id}-Picky`, changes, summary: 'Fails on the poisoned change.' },
      { id: `${id}-Steady`, changes, summary: 'Takes everything.' },
    ],
    summary: 'Two consumers.',
  } as const satisfies Worker;
}

let sequence = 0;
function recordOf(pk: string): DynamoDBRecord {
  sequence += 1;
  return {
    eventID: `event-${pk}`,
    eventName: 'INSERT',
    dynamodb: {
      SequenceNumber: String(1_000_000 + sequence),
      Keys: marshall({ pk, sk: 'MIGRATION#test' }) as never,
      NewImage: marshall({ pk, sk: 'MIGRATION#test', recordType: 'documentMigration', status: 'pending' }) as never,
    },
  };
}

const pkOf = (change: { newImage?: Record<string, unknown> }) => String(change.newImage?.pk);

async function deadLettersOf(readerId: string): Promise<DeadLetter[]> {
  const all: DeadLetter[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await listDeadLetters(100, cursor);
    all.push(...page.letters.filter((letter) => letter.readerId === readerId));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return all;
}

describe('a stream reader', () => {
  it.each([
    ['reports the change it fails on', 'report'],
    ['throws for any batch that holds the change', 'throw'],
  ] as const)(
    'keeps one bad change as a dead letter and handles its neighbours once when a consumer %s',
    async (_label, mode) => {
      const reader = readerOf(uniqueId('reader'));
      const [good1, poisoned, good2] = ['good-1', 'poisoned', 'good-2'].map((name) => `${reader.id}#${name}`);
      const pickyHanded: string[][] = [];
      const pickyTook: string[] = [];
      const steadyTook: string[] = [];
      const picky: Consume = async (changes) => {
        pickyHanded.push(changes.map(pkOf));
        const bad = changes.filter((change) => pkOf(change) === poisoned);
        if (mode === 'throw' && bad.length > 0) throw new Error('poisoned record');
        for (const change of changes) if (!bad.includes(change)) pickyTook.push(pkOf(change));
        return bad;
      };
      const steady: Consume = async (changes) => {
        steadyTook.push(...changes.map(pkOf));
        return [];
      };
      const handler = streamHandler(reader, {
        [`${reader.id}-Picky`]: picky,
        [`${reader.id}-Steady`]: steady,
      } as never);

      const response = await handler({ Records: [good1, poisoned, good2].map(recordOf) });
      const letters = await deadLettersOf(reader.id);

      // Nothing goes back to the stream: the shard's next records do not wait on this one.
      expect(response).toEqual({ batchItemFailures: [] });
      expect(pickyTook.sort()).toEqual([good1, good2].sort());
      expect(steadyTook.sort()).toEqual([good1, poisoned, good2].sort());
      // The first hand-out is the whole batch; every retry hands a change alone (after a throw, its neighbours too,
      // once: each is taken then), and the poisoned one on each of the consumer's attempts.
      expect(pickyHanded[0]).toEqual([good1, poisoned, good2]);
      expect(pickyHanded.slice(1).map((batch) => batch.length)).toEqual(pickyHanded.slice(1).map(() => 1));
      expect(pickyHanded.filter((batch) => batch.includes(poisoned))).toHaveLength(DEFAULT_CONSUMER_ATTEMPTS);
      expect(
        letters.map((letter) => ({
          consumerId: letter.consumerId,
          eventId: letter.eventId,
          failures: letter.failures,
        })),
      ).toEqual([{ consumerId: `${reader.id}-Picky`, eventId: `event-${poisoned}`, failures: 1 }]);
      expect(letters[0].error).toMatch(mode === 'throw' ? /poisoned record/ : /reported the change as failed/);
      expect(letters[0].record.dynamodb?.NewImage).toEqual(
        marshall({ pk: poisoned, sk: 'MIGRATION#test', recordType: 'documentMigration', status: 'pending' }),
      );
    },
  );

  it('replays a dead letter into its consumer once the cause is gone, and keeps it, counted, while it still fails', async () => {
    const reader = readerOf(uniqueId('reader'));
    const poisoned = `${reader.id}#poisoned`;
    let healed = false;
    const replayed: string[] = [];
    const picky: Consume = async (changes) => {
      if (!healed) return changes;
      replayed.push(...changes.map(pkOf));
      return [];
    };
    const consumers = { [`${reader.id}-Picky`]: picky, [`${reader.id}-Steady`]: async () => [] };
    await streamHandler(reader, consumers as never)({ Records: [recordOf(poisoned)] });

    const stillFailing = await replayDeadLetters([{ worker: reader, consumers }], { consumerId: `${reader.id}-Picky` });
    const kept = await deadLettersOf(reader.id);
    healed = true;
    const replay = await replayDeadLetters([{ worker: reader, consumers }], { consumerId: `${reader.id}-Picky` });

    expect(stillFailing.map((outcome) => outcome.status)).toEqual(['failed']);
    expect(kept.map((letter) => letter.failures)).toEqual([2]);
    expect(replay.map((outcome) => outcome.status)).toEqual(['replayed']);
    expect(replayed).toEqual([poisoned]);
    expect(await deadLettersOf(reader.id)).toEqual([]);
  });
});

describe('the local stream poller', () => {
  it('keeps the records a reader keeps failing on as dead letters of the reader after its retries, instead of dropping them', async () => {
    const status = uniqueId('crashing');
    const reader = {
      id: uniqueId('CrashingReader'),
      consumers: [
        {
          id: 'Crashing',
          changes: [{ kind: 'migration', where: { status: { equals: [status] } } }],
          summary: 'Crashes.',
        },
      ],
    } as const;
    const client = new DynamoDBClient({
      endpoint: process.env.DYNAMODB_ENDPOINT,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const poller = await startStreamPoller({
      endpoint: process.env.DYNAMODB_ENDPOINT as string,
      tableName: process.env.TABLE_NAME as string,
      idleMs: 50,
      // Its ten attempts a few ms apart rather than a second (what is tested is that nothing is dropped after them).
      retryPauseMs: 20,
      // A reader that fails as a whole, as one whose dead letters cannot be written reports its records back.
      workers: [{ worker: reader, handler: async () => Promise.reject(new Error('reader down')) }],
    });
    try {
      const pk = `${reader.id}#item`;
      await client.send(
        new PutItemCommand({
          TableName: process.env.TABLE_NAME,
          Item: marshall({ pk, sk: 'MIGRATION#test', recordType: 'documentMigration', status }),
        }),
      );

      const letters = await eventually(
        () => deadLettersOf(reader.id),
        (found) => found.length > 0,
        { what: "the poller's dead letter" },
      );

      expect(
        letters.map((letter) => ({ consumerId: letter.consumerId, pk: letter.record.dynamodb?.NewImage?.pk })),
      ).toEqual([{ consumerId: '*', pk: { S: pk } }]);
    } finally {
      await poller.stop();
      client.destroy();
    }
  });
});
