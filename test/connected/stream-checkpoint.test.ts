/**
 * The stream poller's checkpoint (local/stream-poller.ts): records written while no poller runs (the stack
 * stopped, or killed before its workers saw them) reach the workers after a restart, exactly once each.
 *
 * @table-stream
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { ensureDynamoDbLocal, startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';
import { startStreamPoller, type StreamHandler, type StreamPoller } from '../../local/stream-poller';
import { createTableInput } from '../../shared/db/table-definition';
import type { StreamFilter } from '../../shared/workers';
import { waitFor } from '../support/wait';

/** A subscriber of the poller with a filter of its own. */
type Worker = { id: string; filters: readonly StreamFilter[] };

const CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const ENDPOINT = String(process.env.DYNAMODB_ENDPOINT);
const TABLE = String(process.env.TABLE_NAME);

let dir: string;
const pollers: StreamPoller[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stream-checkpoint-test-'));
});

afterEach(async () => {
  await Promise.all(pollers.splice(0).map((poller) => poller.stop()));
  rmSync(dir, { recursive: true, force: true });
});

/** A worker woken by items of a record type of this test's own, so that other tests' records never match. */
function testWorker(): Worker & { recordType: string } {
  const recordType = `checkpoint-${randomBytes(4).toString('hex')}`;
  return {
    id: 'CheckpointTestWorker',
    recordType,
    filters: [
      {
        eventNames: ['INSERT', 'MODIFY'],
        newImage: { recordType: { equals: [recordType] }, status: { equals: ['pending'] } },
      },
    ],
  };
}

/** A handler that records the key of each record it is handed. */
function recorder(): { handler: StreamHandler; seen: string[] } {
  const seen: string[] = [];
  const handler = async (event: DynamoDBStreamEvent) => {
    seen.push(...event.Records.map((record) => String(record.dynamodb?.Keys?.pk?.S)));
    return { batchItemFailures: [] };
  };
  return { handler, seen };
}

async function writeItem(
  client: DynamoDBClient,
  table: string,
  worker: { recordType: string },
  pk: string,
): Promise<void> {
  await client.send(
    new PutItemCommand({
      TableName: table,
      Item: { pk: { S: pk }, sk: { S: 'item' }, recordType: { S: worker.recordType }, status: { S: 'pending' } },
    }),
  );
}

async function startPoller(options: {
  worker: Worker;
  handler: StreamHandler;
  checkpointFile?: string;
  endpoint?: string;
  table?: string;
}): Promise<StreamPoller> {
  const poller = await startStreamPoller({
    endpoint: options.endpoint ?? ENDPOINT,
    tableName: options.table ?? TABLE,
    workers: [{ worker: options.worker, handler: options.handler }],
    idleMs: 50,
    checkpointFile: options.checkpointFile,
  });
  pollers.push(poller);
  return poller;
}

async function stopPoller(poller: StreamPoller): Promise<void> {
  pollers.splice(pollers.indexOf(poller), 1);
  await poller.stop();
}

/** Long enough for a poller at idleMs 50 to have delivered anything more it was going to. */
const settle = () => new Promise((resolveSettle) => setTimeout(resolveSettle, 500));

async function streamShards(endpoint: string, table: string): Promise<{ streamArn: string; shardIds: string[] }> {
  const dynamodb = new DynamoDBClient({ endpoint, region: 'local', credentials: CREDENTIALS });
  const streams = new DynamoDBStreamsClient({ endpoint, region: 'local', credentials: CREDENTIALS });
  try {
    const streamArn = String(
      (await dynamodb.send(new DescribeTableCommand({ TableName: table }))).Table?.LatestStreamArn,
    );
    const { StreamDescription } = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    return { streamArn, shardIds: (StreamDescription?.Shards ?? []).map((shard) => String(shard.ShardId)) };
  } finally {
    dynamodb.destroy();
    streams.destroy();
  }
}

describe('stream poller checkpoint', () => {
  const client = new DynamoDBClient({ endpoint: ENDPOINT, region: 'local', credentials: CREDENTIALS });
  afterAll(() => client.destroy());

  it('delivers after a restart exactly the records written while no poller ran', async () => {
    const worker = testWorker();
    const checkpointFile = join(dir, 'stream-checkpoint.json');
    const before = recorder();
    const first = await startPoller({ worker, handler: before.handler, checkpointFile });
    await writeItem(client, TABLE, worker, 'handled-before');
    await waitFor(() => before.seen.length === 1);
    await stopPoller(first);
    await writeItem(client, TABLE, worker, 'while-stopped-1');
    await writeItem(client, TABLE, worker, 'while-stopped-2');
    const after = recorder();

    await startPoller({ worker, handler: after.handler, checkpointFile });
    await waitFor(() => after.seen.length >= 2);
    await settle();

    expect(after.seen).toEqual(['while-stopped-1', 'while-stopped-2']);
  });

  it('starts from now on a first run, and writes the checkpoint before it resolves', async () => {
    const worker = testWorker();
    const checkpointFile = join(dir, 'stream-checkpoint.json');
    await writeItem(client, TABLE, worker, 'before-first-run');
    const { handler, seen } = recorder();

    await startPoller({ worker, handler, checkpointFile });
    const checkpoint = JSON.parse(readFileSync(checkpointFile, 'utf8')) as {
      streamArn: string;
      shards: Record<string, string>;
    };
    await writeItem(client, TABLE, worker, 'after-start');
    await waitFor(() => seen.length >= 1);
    await settle();

    expect(seen).toEqual(['after-start']);
    expect(checkpoint.streamArn).toBe((await streamShards(ENDPOINT, TABLE)).streamArn);
    expect(Object.keys(checkpoint.shards).length).toBeGreaterThan(0);
  });

  it('delivers again after a restart the records a worker had not finished when the poller stopped', async () => {
    const worker = testWorker();
    const checkpointFile = join(dir, 'stream-checkpoint.json');
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    let failedCalls = 0;
    const failing: StreamHandler = async () => {
      failedCalls += 1;
      throw new Error('worker killed');
    };
    try {
      const first = await startPoller({ worker, handler: failing, checkpointFile });
      await writeItem(client, TABLE, worker, 'unfinished');
      await waitFor(() => failedCalls === 1);
      // Stopped during the pause before the retry: the record was not handled.
      await stopPoller(first);
    } finally {
      errors.mockRestore();
    }
    const { handler, seen } = recorder();

    await startPoller({ worker, handler, checkpointFile });
    await waitFor(() => seen.length >= 1);
    await settle();

    expect(seen).toEqual(['unfinished']);
  });

  it.each([
    [
      'a sequence number the stream refuses as malformed',
      (shardIds: string[]) => ({ shards: Object.fromEntries(shardIds.map((id) => [id, '1'])) }),
    ],
    [
      'a sequence number past the end of the shard',
      (shardIds: string[]) => ({ shards: Object.fromEntries(shardIds.map((id) => [id, '9'.repeat(21)])) }),
    ],
    [
      'another stream (the table was made again)',
      () => ({
        streamArn: 'arn:aws:dynamodb:ddblocal:000000000000:table/gone/stream/2020-01-01T00:00:00.000',
        shards: {},
      }),
    ],
  ])('reads the shards from their start when the checkpoint names %s', async (_case, checkpointOf) => {
    const worker = testWorker();
    const checkpointFile = join(dir, 'stream-checkpoint.json');
    await writeItem(client, TABLE, worker, 'written-earlier');
    const { streamArn, shardIds } = await streamShards(ENDPOINT, TABLE);
    writeFileSync(checkpointFile, JSON.stringify({ streamArn, ...checkpointOf(shardIds) }));
    const { handler, seen } = recorder();
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    let logged: string[] = [];

    try {
      await startPoller({ worker, handler, checkpointFile });
      await waitFor(() => seen.length >= 1);
      await settle();
    } finally {
      logged = errors.mock.calls.map((call) => call.join(' '));
      errors.mockRestore();
    }

    expect(seen).toEqual(['written-earlier']);
    expect(logged.filter((line) => / is about another stream|reading it from its start/.test(line))).not.toEqual([]);
  });
});

describe('stream poller checkpoint across a restart of DynamoDB Local', () => {
  let dynamodbLocal: DynamoDbLocal | undefined;

  afterEach(async () => {
    await dynamodbLocal?.stop();
    dynamodbLocal = undefined;
  });

  it('resumes after the last handled record: DynamoDB Local on a database folder keeps its stream records and shard ids, even through SIGKILL', async () => {
    const worker = testWorker();
    const table = 'checkpoint-restart';
    const dbPath = join(dir, 'dynamodb');
    const checkpointFile = join(dir, 'stream-checkpoint.json');
    const emulatorDir = await ensureDynamoDbLocal();
    dynamodbLocal = await startDynamoDbLocal({ dbPath, emulatorDir });
    let client = new DynamoDBClient({ endpoint: dynamodbLocal.endpoint, region: 'local', credentials: CREDENTIALS });
    await client.send(new CreateTableCommand(createTableInput(table)));
    const before = recorder();
    const first = await startPoller({
      worker,
      handler: before.handler,
      checkpointFile,
      endpoint: dynamodbLocal.endpoint,
      table,
    });
    await writeItem(client, table, worker, 'handled-before');
    await waitFor(() => before.seen.length === 1);
    await stopPoller(first);
    await writeItem(client, table, worker, 'written-before-the-kill');
    const shardsBefore = await streamShards(dynamodbLocal.endpoint, table);
    client.destroy();

    // As the local stack's Java process dies when node is killed with -9 (setpriv --pdeathsig KILL).
    const exited = new Promise((resolveExit) => dynamodbLocal?.process.once('exit', resolveExit));
    dynamodbLocal.process.kill('SIGKILL');
    await exited;
    dynamodbLocal = await startDynamoDbLocal({ dbPath, emulatorDir });
    client = new DynamoDBClient({ endpoint: dynamodbLocal.endpoint, region: 'local', credentials: CREDENTIALS });
    const shardsAfter = await streamShards(dynamodbLocal.endpoint, table);
    const after = recorder();
    await startPoller({ worker, handler: after.handler, checkpointFile, endpoint: dynamodbLocal.endpoint, table });
    await writeItem(client, table, worker, 'written-after-the-restart');
    await waitFor(() => after.seen.length >= 2);
    await settle();
    client.destroy();

    expect(shardsAfter).toEqual(shardsBefore);
    expect(after.seen).toEqual(['written-before-the-kill', 'written-after-the-restart']);
    expect(existsSync(checkpointFile)).toBe(true);
  });
});
