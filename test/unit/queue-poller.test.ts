import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import {
  startQueuePoller,
  type QueueHandler,
  type QueuePoller,
  type QueuePollerOptions,
} from '../../local/queue-poller';
import { DEAD_LETTER_DIR_NAME, fileQueue } from '../../shared/adapters/queue/file-queue';
import { waitFor } from '../support/wait';

let dir: string;
let poller: QueuePoller | undefined;
let logLines: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'queue-poller-test-'));
  logLines = [];
});

afterEach(async () => {
  await poller?.stop();
  poller = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const start = async (handler: QueueHandler, options: Partial<QueuePollerOptions> = {}): Promise<QueuePoller> => {
  poller = await startQueuePoller({ dir, handler, log: (line) => logLines.push(line), ...options });
  return poller;
};

const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
const jobFiles = () => readdirSync(dir).filter((name) => name.endsWith('.json'));

describe('queue poller', () => {
  it('hands each of 1,000 jobs sent with no delay to a succeeding handler exactly once, and deletes them', async () => {
    const queue = fileQueue(dir);
    await queue.send(Array.from({ length: 1_000 }, (_, n) => ({ body: JSON.stringify({ n }), delaySeconds: 0 })));
    const calls = new Map<number, number>();
    let batches = 0;
    const startedAt = Date.now();

    await start(async (event: SQSEvent) => {
      batches += 1;
      for (const record of event.Records) {
        const { n } = JSON.parse(record.body) as { n: number };
        calls.set(n, (calls.get(n) ?? 0) + 1);
      }
    });
    await waitFor(() => calls.size === 1_000);
    const elapsedMs = Date.now() - startedAt;
    await sleep(200);

    console.log(
      `queue poller: 1,000 jobs handled in ${elapsedMs} ms (${Math.round(1_000_000 / elapsedMs)} jobs/s, ${batches} batches)`,
    );
    expect([...calls.values()].every((count) => count === 1)).toBe(true);
    await waitFor(() => jobFiles().length === 0);
    expect(elapsedMs).toBeLessThan(5_000);
  });

  it('hands a job sent while it is idle to the handler within about 100 ms', async () => {
    const queue = fileQueue(dir);
    const arrivals: number[] = [];
    await start(async () => {
      arrivals.push(Date.now());
    });
    await sleep(300);
    const latencies: number[] = [];

    for (let n = 0; n < 5; n += 1) {
      const sentAt = Date.now();
      await queue.send([{ body: 'ping', delaySeconds: 0 }]);
      await waitFor(() => arrivals.length === n + 1);
      latencies.push(arrivals[n] - sentAt);
      await sleep(150);
    }

    console.log(`queue poller: latency of a job sent while idle ${latencies.join(', ')} ms`);
    expect(Math.max(...latencies)).toBeLessThan(250);
  });

  it('builds SQS records: message id, body, receipt handle and receive count', async () => {
    const queue = fileQueue(dir);
    await queue.send([{ body: '{"hello":"world"}', delaySeconds: 0 }]);
    const records: SQSRecord[] = [];

    await start(async (event) => {
      records.push(...event.Records);
    });
    await waitFor(() => records.length === 1);

    expect(records[0]).toMatchObject({
      body: '{"hello":"world"}',
      eventSource: 'aws:sqs',
      md5OfBody: 'fbc24bcc7a1794758fc1327fcfebdaf6',
      attributes: { ApproximateReceiveCount: '1' },
    });
    expect(records[0].messageId).toMatch(/^[0-9A-Z]{26}$/);
    expect(records[0].receiptHandle).toContain(records[0].messageId);
  });

  it('hands a job the handler reported as failed to it again once the visibility timeout has passed, and only that job', async () => {
    const queue = fileQueue(dir);
    await queue.send([
      { body: 'fails once', delaySeconds: 0 },
      { body: 'fine', delaySeconds: 0 },
    ]);
    const seen: Array<{ body: string; count: string; at: number }> = [];

    await start(
      async (event): Promise<SQSBatchResponse> => {
        const failures = [];
        for (const record of event.Records) {
          seen.push({ body: record.body, count: record.attributes.ApproximateReceiveCount, at: Date.now() });
          if (record.body === 'fails once' && record.attributes.ApproximateReceiveCount === '1')
            failures.push({ itemIdentifier: record.messageId });
        }
        return { batchItemFailures: failures };
      },
      { visibilityTimeoutMs: 300, idleMs: 20 },
    );
    await waitFor(() => seen.length === 3);
    await sleep(500);

    const retried = seen.filter((call) => call.body === 'fails once');
    expect(seen.filter((call) => call.body === 'fine')).toHaveLength(1);
    expect(retried.map((call) => call.count)).toEqual(['1', '2']);
    expect(retried[1].at - retried[0].at).toBeGreaterThanOrEqual(280);
    expect(jobFiles()).toEqual([]);
  });

  it('retries every job of a batch whose handler throws', async () => {
    const queue = fileQueue(dir);
    await queue.send([
      { body: 'a', delaySeconds: 0 },
      { body: 'b', delaySeconds: 0 },
    ]);
    let calls = 0;
    const handled: string[] = [];

    await start(
      async (event) => {
        calls += 1;
        if (calls === 1) throw new Error('worker crashed');
        handled.push(...event.Records.map((record) => record.body));
      },
      { visibilityTimeoutMs: 200, idleMs: 20 },
    );
    await waitFor(() => handled.length === 2);

    expect(handled.sort()).toEqual(['a', 'b']);
    expect(logLines.some((line) => line.includes('worker crashed'))).toBe(true);
  });

  it('moves a job that failed maxReceiveCount times to the dead-letter folder, with a log line, and stops handing it out', async () => {
    const queue = fileQueue(dir);
    await queue.send([{ body: 'poison', delaySeconds: 0 }]);
    let calls = 0;

    await start(
      async (event) => {
        calls += 1;
        return { batchItemFailures: event.Records.map((record) => ({ itemIdentifier: record.messageId })) };
      },
      { visibilityTimeoutMs: 50, idleMs: 10, maxReceiveCount: 3 },
    );
    await waitFor(
      () => existsSync(join(dir, DEAD_LETTER_DIR_NAME)) && readdirSync(join(dir, DEAD_LETTER_DIR_NAME)).length === 1,
    );
    await sleep(300);

    expect(calls).toBe(3);
    expect(jobFiles()).toEqual([]);
    expect(logLines.filter((line) => line.includes('failed 3 time(s); moved to'))).toHaveLength(1);
  });

  it('moves a job whose last lease ran out unsettled (a killed worker) to the dead-letter folder without handing it out again', async () => {
    const queue = fileQueue(dir, { visibilityTimeoutMs: 1 });
    await queue.send([{ body: 'orphan', delaySeconds: 0 }]);
    for (let receive = 0; receive < 3; receive += 1) {
      await queue.receive(10);
      await sleep(5);
    }
    let calls = 0;

    await start(
      async () => {
        calls += 1;
      },
      { maxReceiveCount: 3, idleMs: 10 },
    );
    await waitFor(
      () => existsSync(join(dir, DEAD_LETTER_DIR_NAME)) && readdirSync(join(dir, DEAD_LETTER_DIR_NAME)).length === 1,
    );

    expect(calls).toBe(0);
  });

  it('hands out a delayed job once it falls due, not before', async () => {
    const queue = fileQueue(dir);
    const arrivals: number[] = [];
    await start(async () => {
      arrivals.push(Date.now());
    });
    const sentAt = Date.now();

    await queue.send([{ body: 'later', delaySeconds: 1 }]);
    await waitFor(() => arrivals.length === 1);

    expect(arrivals[0] - sentAt).toBeGreaterThanOrEqual(1_000);
    expect(arrivals[0] - sentAt).toBeLessThan(1_500);
  });

  it('waits for the batches in flight when stopped', async () => {
    const queue = fileQueue(dir);
    await queue.send([{ body: 'slow', delaySeconds: 0 }]);
    let finished = false;
    const first = await start(async () => {
      await sleep(200);
      finished = true;
    });
    await sleep(50);

    await first.stop();

    expect(finished).toBe(true);
    expect(jobFiles()).toEqual([]);
  });

  it('hands out again, after a restart, a job taken by a process that died before settling it', async () => {
    const killedProcess = fileQueue(dir, { visibilityTimeoutMs: 200 });
    await killedProcess.send([{ body: 'interrupted', delaySeconds: 0 }]);
    await killedProcess.receive(10);
    const records: SQSRecord[] = [];

    await start(
      async (event) => {
        records.push(...event.Records);
      },
      { idleMs: 20 },
    );
    await waitFor(() => records.length === 1);

    expect(records[0]).toMatchObject({ body: 'interrupted', attributes: { ApproximateReceiveCount: '2' } });
  });

  it('keeps up with a handler that takes 20 ms a batch by running batches side by side', async () => {
    const queue = fileQueue(dir);
    await queue.send(Array.from({ length: 1_000 }, (_, n) => ({ body: String(n), delaySeconds: 0 })));
    let handled = 0;
    const startedAt = Date.now();

    await start(async (event) => {
      await sleep(20);
      handled += event.Records.length;
    });
    await waitFor(() => handled === 1_000);
    const elapsedMs = Date.now() - startedAt;

    console.log(
      `queue poller: 1,000 jobs, 20 ms per batch of 10, handled in ${elapsedMs} ms (${Math.round(1_000_000 / elapsedMs)} jobs/s)`,
    );
    expect(1_000_000 / elapsedMs).toBeGreaterThanOrEqual(200);
  });
});
