/**
 * One reader, several consumers (docs/architecture.md "The stream and the delivery pipeline"): a consumer that fails
 * neither loses nor holds up another's changes beyond its own retries, and gets its own changes after them. The
 * local stream poller plays the event source mapping; the reader is the one the stack deploys (streamHandler).
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { startStreamPoller, type StreamPoller } from '../../local/stream-poller';
import { streamHandler, type Consume } from '../../shared/domain/stream/dispatch';
import type { Worker } from '../../shared/workers';
import { waitFor } from '../support/wait';

const client = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

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
      Item: { pk: { S: pk }, sk: { S: 'MIGRATION#test' }, recordType: { S: 'documentMigration' }, status: { S: status } },
    }),
  );
}

describe('consumers of one stream reader', () => {
  let poller: StreamPoller | undefined;

  afterEach(async () => {
    await poller?.stop();
  });

  afterAll(() => client.destroy());

  it("hands a consumer its changes while another fails, and the failing one its changes after its retries", async () => {
    const status = `consumers-${randomBytes(4).toString('hex')}`;
    const reader = readerOf(status);
    let failing = true;
    let failedCalls = 0;
    const failingSaw = new Set<string>();
    const steadySaw: string[] = [];
    const failingConsume: Consume = async (changes) => {
      if (failing) {
        failedCalls += 1;
        throw new Error('fault injected');
      }
      for (const change of changes) failingSaw.add(String(change.newImage?.pk));
      return [];
    };
    const steadyConsume: Consume = async (changes) => {
      steadySaw.push(...changes.map((change) => String(change.newImage?.pk)));
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
    // The steady consumer has every change while the other is still failing on them.
    await waitFor(() => keys.every((key) => steadySaw.includes(key)) && failedCalls >= 1, { what: 'the steady consumer handed every change' });
    const failedBefore = failingSaw.size;
    failing = false;
    await waitFor(() => keys.every((key) => failingSaw.has(key)), { what: 'the failing consumer handed its changes again' });

    expect(failedBefore).toBe(0);
    expect(new Set(steadySaw)).toEqual(new Set(keys));
    expect([...failingSaw].sort()).toEqual([...keys].sort());
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

    // The poller gives the failing consumer's records up after its retries (ten, a second apart).
    await waitFor(() => steadySaw.has(later), { what: 'the later change' });
    expect([...steadySaw].sort()).toEqual([first, later].sort());
  });
});
