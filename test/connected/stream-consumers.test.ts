/**
 * One reader, several consumers (docs/architecture.md "The stream and the delivery pipeline"): a consumer that fails
 * neither loses nor holds up another's changes beyond its own retries, and gets its own changes after them. The
 * local stream poller plays the event source mapping; the reader is the one the stack deploys (streamHandler).
 *
 * @table-stream
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { startStreamPoller, type StreamPoller } from '../../local/stream-poller';
import { streamHandler, type Consume } from '../../shared/domain/stream/dispatch';
import type { Worker } from '../../shared/workers';
import { waitFor } from '../support/wait';

const client = new DynamoDBClient({
  endpoint: process.env.DYNAMODB_ENDPOINT,
  region: 'local',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

/** Two consumers of the same kind of change, narrowed to a status of this test's own (no other test writes it). */
function readerOf(status: string) {
  const changes = [{ kind: 'migration', where: { status: { equals: [status] } } }] as const;
  return {
    id: 'ConsumersTestReader',
    entry: 'test',
    consumers: [
      { id: 'Failing', changes, summary: 'Fails until told otherwise.' },
      { id: 'Steady', changes, summary: 'Records what it is handed.' },
    ],
    summary: 'Two consumers.',
  } as const satisfies Worker;
}

async function writeItem(status: string, pk: string): Promise<void> {
  await client.send(
    new PutItemCommand({
      TableName: process.env.TABLE_NAME,
      Item: {
        pk: { S: pk },
        sk: { S: 'MIGRATION#test' },
        recordType: { S: 'documentMigration' },
        status: { S: status },
      },
    }),
  );
}

describe('consumers of one stream reader', () => {
  let poller: StreamPoller | undefined;

  afterEach(async () => {
    await poller?.stop();
  });

  afterAll(() => client.destroy());

  it('hands a consumer its changes while another fails, and the failing one its changes after its retries', async () => {
    const status = `consumers-${randomBytes(4).toString('hex')}`;
    const reader = readerOf(status);
    // Order of events across both consumers: when the steady one first had a change, when the failing one took it.
    let clock = 0;
    const steadyFirst = new Map<string, number>();
    const failingTook = new Map<string, number>();
    const failingAttempts = new Map<string, number>();
    // Fails every batch holding a change it has not been handed before, so each change fails once and is taken on
    // a retry, however the poller happens to batch them.
    const failingConsume: Consume = async (changes) => {
      const keys = changes.map((change) => String(change.newImage?.pk));
      const firstTime = keys.filter((key) => !failingAttempts.has(key));
      for (const key of keys) failingAttempts.set(key, (failingAttempts.get(key) ?? 0) + 1);
      if (firstTime.length > 0) throw new Error('fault injected');
      for (const key of keys) if (!failingTook.has(key)) failingTook.set(key, ++clock);
      return [];
    };
    const steadyConsume: Consume = async (changes) => {
      for (const change of changes) {
        const key = String(change.newImage?.pk);
        if (!steadyFirst.has(key)) steadyFirst.set(key, ++clock);
      }
      return [];
    };
    poller = await startStreamPoller({
      endpoint: process.env.DYNAMODB_ENDPOINT as string,
      tableName: process.env.TABLE_NAME as string,
      idleMs: 50,
      workers: [{ worker: reader, handler: streamHandler(reader, { Failing: failingConsume, Steady: steadyConsume }) }],
    });
    const keys = ['a', 'b', 'c'].map((name) => `consumers#${status}#${name}`);

    for (const key of keys) await writeItem(status, key);
    await waitFor(() => keys.every((key) => failingTook.has(key)), {
      what: 'the failing consumer to take every change on a retry',
    });

    // Each change failed once for the failing consumer, and the steady one had it before the failing one took it.
    expect(keys.map((key) => (failingAttempts.get(key) ?? 0) >= 2)).toEqual(keys.map(() => true));
    expect(keys.map((key) => (steadyFirst.get(key) ?? Infinity) < (failingTook.get(key) ?? -Infinity))).toEqual(
      keys.map(() => true),
    );
    expect(new Set(steadyFirst.keys())).toEqual(new Set(keys));
  });

  it("passes a later change to a healthy consumer once the failing one's retries are spent, and loses none of it", async () => {
    const status = `consumers-${randomBytes(4).toString('hex')}`;
    const reader = readerOf(status);
    const steadySaw = new Set<string>();
    poller = await startStreamPoller({
      endpoint: process.env.DYNAMODB_ENDPOINT as string,
      tableName: process.env.TABLE_NAME as string,
      idleMs: 50,
      workers: [
        {
          worker: reader,
          handler: streamHandler(reader, {
            Failing: async () => {
              throw new Error('fault injected');
            },
            Steady: async (changes) => {
              for (const change of changes) steadySaw.add(String(change.newImage?.pk));
              return [];
            },
          }),
        },
      ],
    });
    const first = `consumers#${status}#first`;
    const later = `consumers#${status}#later`;

    await writeItem(status, first);
    await waitFor(() => steadySaw.has(first), { what: 'the first change' });
    await writeItem(status, later);

    // The reader gives the failing consumer's changes up after its own retries (a second or so) and keeps them as
    // dead letters (test/connected/stream-dispatch.test.ts), so the later change follows at once.
    await waitFor(() => steadySaw.has(later), { what: 'the later change' });
    expect([...steadySaw].sort()).toEqual([first, later].sort());
  });
});
