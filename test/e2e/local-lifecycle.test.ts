/**
 * The lifecycle of the local stack: `bin/local.ts` stops cleanly on SIGTERM and takes DynamoDB Local with it,
 * `npm start` stops as a process manager expects when its one pid is signalled, a data folder survives a restart (and
 * a kill -9), and a missing Java is reported in one sentence.
 */
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { checkJava, pickFreePort } from '../../local/dynamodb-local';
import {
  STATE_FILE_NAME,
  STREAM_CHECKPOINT_FILE_NAME,
  startLocalStack,
  type LocalStack,
} from '../../local/local-stack';
import {
  dynamoDbLocalPids,
  isListening,
  killProcessGroup,
  launchLocalStack,
  launchNpmStart,
  processGroupMembers,
  spawnLocalStack,
  stopLocalStackProcess,
  type NpmStartProcess,
} from '../support/local-stack-process';
import { WAIT_CEILING_MS, waitFor } from '../support/wait';

describe('bin/local.ts', () => {
  it('exits with 0 on SIGTERM and leaves no DynamoDB Local behind', async () => {
    const stack = await spawnLocalStack();
    expect(stack.output()).toContain(`Local stack ready at ${stack.baseUrl}`);
    // The check below means something only if the process is found while the stack runs.
    expect(dynamoDbLocalPids(stack.dynamodbPort)).toHaveLength(1);

    const status = await stopLocalStackProcess(stack.child);

    expect(status).toEqual({ code: 0, signal: null });
    expect(dynamoDbLocalPids(stack.dynamodbPort)).toEqual([]);
  });

  it('stops DynamoDB Local and exits with 1 when startup fails after it was started', async () => {
    // A table name DynamoDB rejects makes the table step fail, after DynamoDB Local is already running.
    const dynamodbPort = await pickFreePort();
    const failure = await spawnLocalStack({ env: { TABLE_NAME: 'x' }, dynamodbPort }).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(String(failure)).toMatch(/exited before it was ready \(code 1, signal null\)[\s\S]*Invalid table/);
    expect(dynamoDbLocalPids(dynamodbPort)).toEqual([]);
  });

  it('exits with 0 on SIGTERM during startup and still stops DynamoDB Local', async () => {
    const launched = await launchLocalStack();
    // Wait until DynamoDB Local runs but (most likely) does not answer yet: that is the window to interrupt. It
    // starts after bin/local.ts installed its signal handlers (the first thing it does), so its process also proves
    // that SIGTERM now reaches a handler and not Node's default action (exit 143), however slow the machine.
    await waitFor(() => dynamoDbLocalPids(launched.dynamodbPort).length > 0, { what: 'DynamoDB Local to start' });

    const status = await stopLocalStackProcess(launched.child);

    expect(status).toEqual({ code: 0, signal: null });
    expect(launched.output()).not.toContain('Local stack ready');
    expect(dynamoDbLocalPids(launched.dynamodbPort)).toEqual([]);
  });
});

/** What the issue asks of a stop: within 5 s of the signal, no process of the run and no listening port. */
const STOP_BOUND_MS = 5_000;
/** npm, tsx's first compile of the handlers and Java, on a busy machine. */
const NPM_START_READY_MS = WAIT_CEILING_MS;
const NPM_START_TEST_TIMEOUT_MS = 2 * NPM_START_READY_MS + 60_000;

describe('npm start, stopped as a process manager stops it (one signal to the pid it started)', () => {
  let dataDir: string;
  let run: NpmStartProcess | undefined;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'collab-npm-start-'));
  });

  afterEach(() => {
    // Whatever a failed test left: the run's whole process group.
    if (run !== undefined) killProcessGroup(run.pid);
    run = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function startAndWait(env: Record<string, string>): Promise<{ run: NpmStartProcess; port: number }> {
    const started = launchNpmStart({ env: { DATA_DIR: dataDir, ...env }, readyTimeoutMs: NPM_START_READY_MS });
    run = started;
    const baseUrl = await started.ready;
    return { run: started, port: Number(new URL(baseUrl).port) };
  }

  /** Milliseconds from `since` until the run has no process left and neither port listens. */
  async function timeUntilGone(pgid: number, ports: readonly number[], since: number): Promise<number> {
    const gone = async (): Promise<boolean> => {
      if (processGroupMembers(pgid).length > 0) return false;
      for (const port of ports) if (await isListening(port)) return false;
      return true;
    };
    // The ceiling only ends a failing test; the bound is asserted on the time measured.
    await waitFor(gone, { ceilingMs: 60_000 }).catch(() => undefined);
    const elapsed = Date.now() - since;
    if (!(await gone()))
      throw new Error(`Still running ${elapsed} ms after the signal:\n${processGroupMembers(pgid).join('\n')}`);
    return elapsed;
  }

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'stops npm, node and DynamoDB Local and frees both ports within 5 s of %s to the npm process alone',
    async (signal) => {
      const dynamodbPort = await pickFreePort();
      const { run: started, port } = await startAndWait({ PORT: '0', DYNAMODB_PORT: String(dynamodbPort) });
      // The checks below mean something only if they see the run while it serves.
      const [javaPid] = dynamoDbLocalPids(dynamodbPort);
      expect(processGroupMembers(started.pid).map((member) => Number.parseInt(member, 10))).toEqual(
        expect.arrayContaining([started.pid, javaPid]),
      );
      expect(await isListening(port)).toBe(true);

      const signalledAt = Date.now();
      process.kill(started.pid, signal);
      const stoppedAfterMs = await timeUntilGone(started.pid, [port, dynamodbPort], signalledAt);

      expect(stoppedAfterMs).toBeLessThan(STOP_BOUND_MS);
      expect(await started.exited).toEqual({ code: 0, signal: null });
      expect(started.output()).toContain(`Local stack: ${signal}, stopping.`);
      // Stopped, not killed: the state file for the operator CLI went with it.
      expect(existsSync(join(dataDir, STATE_FILE_NAME))).toBe(false);
    },
    NPM_START_TEST_TIMEOUT_MS,
  );

  it(
    'stops node and DynamoDB Local within 5 s when npm itself is killed with SIGKILL and forwards nothing',
    async () => {
      const dynamodbPort = await pickFreePort();
      const { run: started, port } = await startAndWait({ PORT: '0', DYNAMODB_PORT: String(dynamodbPort) });

      const killedAt = Date.now();
      process.kill(started.pid, 'SIGKILL');
      const stoppedAfterMs = await timeUntilGone(started.pid, [port, dynamodbPort], killedAt);

      expect(stoppedAfterMs).toBeLessThan(STOP_BOUND_MS);
      expect(await started.exited).toEqual({ code: null, signal: 'SIGKILL' });
    },
    NPM_START_TEST_TIMEOUT_MS,
  );

  it(
    'starts again on the same data folder and ports after a kill -9 of the whole process tree',
    async () => {
      const dynamodbPort = await pickFreePort();
      const first = await startAndWait({ PORT: '0', DYNAMODB_PORT: String(dynamodbPort) });
      killProcessGroup(first.run.pid);
      await timeUntilGone(first.run.pid, [first.port, dynamodbPort], Date.now());
      // What the killed run left: its state file (naming a dead pid), the database, the stream checkpoint.
      const staleState = JSON.parse(readFileSync(join(dataDir, STATE_FILE_NAME), 'utf8')) as { pid: number };
      expect(existsSync(join(dataDir, STREAM_CHECKPOINT_FILE_NAME))).toBe(true);

      const second = await startAndWait({ PORT: String(first.port), DYNAMODB_PORT: String(dynamodbPort) });

      expect(second.port).toBe(first.port);
      const response = await fetch(`http://127.0.0.1:${second.port}/openapi.json`);
      expect(response.status).toBe(200);
      const state = JSON.parse(readFileSync(join(dataDir, STATE_FILE_NAME), 'utf8')) as { pid: number };
      expect(state.pid).not.toBe(staleState.pid);
      process.kill(second.run.pid, 'SIGTERM');
      expect(await second.run.exited).toEqual({ code: 0, signal: null });
    },
    NPM_START_TEST_TIMEOUT_MS,
  );
});

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
    return new DynamoDBClient({
      endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
  }

  it('keeps the table, its items, the keys and its place in the stream across a restart', async () => {
    // The same DynamoDB Local port both times: the service modules read the endpoint once, when they load, and a
    // second start in this process reuses them (as a second copy of them would load a second Yjs, which Yjs
    // reports as "Yjs was already imported"; a real restart is a new process).
    const dynamodbPort = await pickFreePort();
    stack = await startLocalStack({ port: 0, dataDir, dynamodbPort });
    const writer = client(stack.dynamodbEndpoint);
    await writer.send(
      new PutItemCommand({
        TableName: stack.tableName,
        Item: { pk: { S: 'lifecycle' }, sk: { S: 'item' }, note: { S: 'kept' } },
      }),
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
    expect((JSON.parse(readFileSync(checkpointFile, 'utf8')) as { streamArn: string }).streamArn).toContain(
      `table/${stack.tableName}/stream/`,
    );
    expect(statSync(checkpointFile).mode & 0o777).toBe(0o600);
  });
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
