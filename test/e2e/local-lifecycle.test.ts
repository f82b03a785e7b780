/**
 * The lifecycle of the local stack: `bin/local.ts` stops cleanly on SIGTERM and takes DynamoDB Local with it,
 * a data folder survives a restart, and a missing Java is reported in one sentence.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { checkJava, pickFreePort } from '../../bin/lib/dynamodb-local';
import { STREAM_CHECKPOINT_FILE_NAME, startLocalStack, type LocalStack } from '../../bin/lib/local-stack';
import { dynamoDbLocalPids, launchLocalStack, spawnLocalStack, stopLocalStackProcess } from '../support/local-stack-process';

const STACK_TIMEOUT_MS = 120_000;

describe('bin/local.ts', () => {
  it(
    'exits with 0 on SIGTERM and leaves no DynamoDB Local behind',
    async () => {
      const stack = await spawnLocalStack();
      expect(stack.output()).toContain(`Local stack ready at ${stack.baseUrl}`);
      // The check below means something only if the process is found while the stack runs.
      expect(dynamoDbLocalPids(stack.dynamodbPort)).toHaveLength(1);

      const status = await stopLocalStackProcess(stack.child);

      expect(status).toEqual({ code: 0, signal: null });
      expect(dynamoDbLocalPids(stack.dynamodbPort)).toEqual([]);
    },
    STACK_TIMEOUT_MS,
  );

  it(
    'stops DynamoDB Local and exits with 1 when startup fails after it was started',
    async () => {
      // A table name DynamoDB rejects makes the table step fail, after DynamoDB Local is already running.
      const dynamodbPort = await pickFreePort();
      const failure = await spawnLocalStack({ env: { TABLE_NAME: 'x' }, dynamodbPort }).then(
        () => undefined,
        (error: unknown) => error,
      );

      expect(String(failure)).toMatch(/exited before it was ready \(code 1, signal null\)[\s\S]*Invalid table/);
      expect(dynamoDbLocalPids(dynamodbPort)).toEqual([]);
    },
    STACK_TIMEOUT_MS,
  );

  it(
    'exits with 0 on SIGTERM during startup and still stops DynamoDB Local',
    async () => {
      const launched = await launchLocalStack();
      // Wait until DynamoDB Local runs but (most likely) does not answer yet: that is the window to interrupt.
      await waitFor(() => dynamoDbLocalPids(launched.dynamodbPort).length > 0, 60_000);

      const status = await stopLocalStackProcess(launched.child);

      expect(status).toEqual({ code: 0, signal: null });
      expect(launched.output()).not.toContain('Local stack ready');
      expect(dynamoDbLocalPids(launched.dynamodbPort)).toEqual([]);
    },
    STACK_TIMEOUT_MS,
  );
});

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms.`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

describe('startLocalStack with a data folder', () => {
  let dataDir: string;
  let stack: LocalStack | undefined;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'collab-lifecycle-'));
  });

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  function client(endpoint: string): DynamoDBClient {
    return new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  }

  it(
    'keeps the table, its items, the keys and its place in the stream across a restart',
    async () => {
      // The same DynamoDB Local port both times: the service modules read the endpoint once, when they load, and a
      // second start in this process reuses them (as a second copy of them would load a second Yjs, which Yjs
      // reports as "Yjs was already imported"; a real restart is a new process).
      const dynamodbPort = await pickFreePort();
      stack = await startLocalStack({ port: 0, dataDir, dynamodbPort });
      const writer = client(stack.dynamodbEndpoint);
      await writer.send(
        new PutItemCommand({ TableName: stack.tableName, Item: { pk: { S: 'lifecycle' }, sk: { S: 'item' }, note: { S: 'kept' } } }),
      );
      writer.destroy();
      const keys = readFileSync(join(dataDir, 'local-keys.json'), 'utf8');
      await stack.stop();
      stack = undefined;

      stack = await startLocalStack({ port: 0, dataDir, dynamodbPort });
      const reader = client(stack.dynamodbEndpoint);
      const { Item } = await reader.send(
        new GetItemCommand({ TableName: stack.tableName, Key: { pk: { S: 'lifecycle' }, sk: { S: 'item' } } }),
      );
      reader.destroy();

      expect(Item?.note).toEqual({ S: 'kept' });
      expect(readFileSync(join(dataDir, 'local-keys.json'), 'utf8')).toBe(keys);
      const checkpointFile = join(dataDir, STREAM_CHECKPOINT_FILE_NAME);
      expect((JSON.parse(readFileSync(checkpointFile, 'utf8')) as { streamArn: string }).streamArn).toContain(`table/${stack.tableName}/stream/`);
      expect(statSync(checkpointFile).mode & 0o777).toBe(0o600);
    },
    STACK_TIMEOUT_MS,
  );
});

describe('checkJava', () => {
  const originalPath = process.env.PATH;
  let binDir: string;

  beforeEach(() => {
    binDir = mkdtempSync(join(tmpdir(), 'collab-java-'));
  });

  afterEach(() => {
    process.env.PATH = originalPath;
    rmSync(binDir, { recursive: true, force: true });
  });

  it('says in one sentence what to install when java is not on PATH', async () => {
    process.env.PATH = binDir;
    await expect(checkJava()).rejects.toThrow(
      'DynamoDB Local needs Java 17 or newer (no working `java` was found): install a JDK/JRE 17+ ' +
        '(for example `apt-get install openjdk-17-jre-headless`) and make sure `java` is on PATH.',
    );
  });

  it('names the version it found when java is too old', async () => {
    // A stand-in for Java 8, which reports itself as "1.8.0_x" on stderr.
    const fakeJava = join(binDir, 'java');
    writeFileSync(fakeJava, '#!/bin/sh\necho \'openjdk version "1.8.0_412"\' >&2\n');
    chmodSync(fakeJava, 0o755);
    process.env.PATH = `${binDir}:/bin:/usr/bin`;
    await expect(checkJava()).rejects.toThrow(/^DynamoDB Local needs Java 17 or newer \(found Java 8\): install/);
  });

  it('accepts the java on this machine', async () => {
    await expect(checkJava()).resolves.toBeUndefined();
  });
});
