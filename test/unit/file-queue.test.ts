import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEAD_LETTER_DIR_NAME, fileQueue } from '../../shared/adapters/queue/file-queue';

const PROJECT_ROOT = resolve(__dirname, '..', '..');
const JOB_FILE = /^\d{15}-[0-9A-Za-z]+-\d+\.json$/;

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'file-queue-test-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const bodies = (jobs: ReadonlyArray<{ body: string }>) => jobs.map((job) => job.body);
const jobFiles = () => readdirSync(dir).filter((name) => JOB_FILE.test(name));

describe('file queue', () => {
  it('hands out due jobs earliest due time first', async () => {
    const queue = fileQueue(dir);
    const now = Date.now();
    await queue.send([
      { body: 'late', delaySeconds: 2 },
      { body: 'now', delaySeconds: 0 },
      { body: 'soon', delaySeconds: 1 },
    ]);

    const received = await queue.receive(10, now + 5_000);

    expect(bodies(received)).toEqual(['now', 'soon', 'late']);
  });

  it('keeps a delayed job until its delay has passed', async () => {
    const queue = fileQueue(dir);
    const now = Date.now();
    await queue.send([{ body: 'delayed', delaySeconds: 30 }]);

    const early = await queue.receive(10, now + 29_000);
    const due = await queue.receive(10, now + 31_000);

    expect(early).toEqual([]);
    expect(queue.nextDueAt()).toBeUndefined();
    expect(bodies(due)).toEqual(['delayed']);
  });

  it('tells when the earliest job that is not due yet will be', async () => {
    const queue = fileQueue(dir);
    const before = Date.now();
    await queue.send([{ body: 'delayed', delaySeconds: 30 }]);

    await queue.receive(10, before);

    expect(queue.nextDueAt()).toBeGreaterThanOrEqual(before + 30_000);
    expect(queue.nextDueAt()).toBeLessThanOrEqual(Date.now() + 30_000);
  });

  it('accepts a delay longer than SQS allows', async () => {
    const queue = fileQueue(dir);
    const now = Date.now();
    await queue.send([{ body: 'tomorrow', delaySeconds: 86_400 }]);

    expect(await queue.receive(10, now + 86_399_000)).toEqual([]);
    expect(bodies(await queue.receive(10, now + 86_401_000))).toEqual(['tomorrow']);
  });

  it('hands out at most the number asked for', async () => {
    const queue = fileQueue(dir);
    await queue.send(Array.from({ length: 5 }, (_, n) => ({ body: String(n), delaySeconds: 0 })));

    const first = await queue.receive(3);
    const rest = await queue.receive(3);

    expect(first).toHaveLength(3);
    expect(rest).toHaveLength(2);
  });

  it('hides a received job from every consumer until the visibility timeout has passed, then hands it out again', async () => {
    const queue = fileQueue(dir, { visibilityTimeoutMs: 1_000 });
    const otherConsumer = fileQueue(dir, { visibilityTimeoutMs: 1_000 });
    await queue.send([{ body: 'job', delaySeconds: 0 }]);
    const now = Date.now();

    const [first] = await queue.receive(10, now);
    const duringLease = [...(await queue.receive(10, now + 999)), ...(await otherConsumer.receive(10, now + 999))];
    const [again] = await otherConsumer.receive(10, now + 1_001);

    expect(first.receiveCount).toBe(1);
    expect(duringLease).toEqual([]);
    expect(again.id).toBe(first.id);
    expect(again.body).toBe('job');
    expect(again.receiveCount).toBe(2);
  });

  it('never hands the same job to two receives running at once', async () => {
    const consumers = [fileQueue(dir), fileQueue(dir)];
    await consumers[0].send(Array.from({ length: 100 }, (_, n) => ({ body: String(n), delaySeconds: 0 })));

    const batches = await Promise.all(Array.from({ length: 12 }, (_, n) => consumers[n % 2].receive(10)));

    const ids = batches.flat().map((job) => job.id);
    expect(ids).toHaveLength(100);
    expect(new Set(ids).size).toBe(100);
  });

  it('deletes an acknowledged job for good', async () => {
    const queue = fileQueue(dir, { visibilityTimeoutMs: 1_000 });
    await queue.send([{ body: 'job', delaySeconds: 0 }]);
    const now = Date.now();
    const [job] = await queue.receive(10, now);

    await queue.ack(job);

    expect(await queue.receive(10, now + 60_000)).toEqual([]);
    expect(jobFiles()).toEqual([]);
  });

  it('ignores the acknowledgement of a lease that expired and was taken again, leaving the job to its new holder', async () => {
    const queue = fileQueue(dir, { visibilityTimeoutMs: 1_000 });
    await queue.send([{ body: 'job', delaySeconds: 0 }]);
    const now = Date.now();
    const [stale] = await queue.receive(10, now);
    const [current] = await queue.receive(10, now + 1_001);

    await queue.ack(stale);

    expect(jobFiles()).toEqual([current.receiptHandle]);
  });

  it('puts a released job back with the new delay, keeping its receive count', async () => {
    const queue = fileQueue(dir, { visibilityTimeoutMs: 60_000 });
    await queue.send([{ body: 'job', delaySeconds: 0 }]);
    const now = Date.now();
    const [job] = await queue.receive(10, now);

    await queue.release(job, 5, now);

    expect(await queue.receive(10, now + 4_999)).toEqual([]);
    const [again] = await queue.receive(10, now + 5_000);
    expect(again.id).toBe(job.id);
    expect(again.receiveCount).toBe(2);
  });

  it('moves a job to the dead-letter folder, whole', async () => {
    const queue = fileQueue(dir);
    await queue.send([{ body: 'poison', delaySeconds: 0 }]);
    const [job] = await queue.receive(10);

    const path = await queue.deadLetter(job);

    expect(jobFiles()).toEqual([]);
    expect(path).toBe(join(dir, DEAD_LETTER_DIR_NAME, job.receiptHandle));
    expect(JSON.parse(readFileSync(String(path), 'utf8'))).toMatchObject({ id: job.id, body: 'poison' });
  });

  it('moves a file that is not a job to the dead-letter folder instead of handing it out', async () => {
    const queue = fileQueue(dir);
    writeFileSync(join(dir, `${String(Date.now()).padStart(15, '0')}-FOREIGN-0.json`), 'not json');

    const received = await queue.receive(10);

    expect(received).toEqual([]);
    expect(readdirSync(join(dir, DEAD_LETTER_DIR_NAME))).toHaveLength(1);
  });

  it('skips a temporary file left by a writer that was killed, and removes it; a live writer’s stays', async () => {
    const queue = fileQueue(dir);
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    const abandoned = `.001.json.tmp-${deadPid}-0a1b2c`;
    const inProgress = `.002.json.tmp-${process.ppid}-0a1b2c`;
    writeFileSync(join(dir, abandoned), '{"id":"half');
    writeFileSync(join(dir, inProgress), '{"id":"half');

    const received = await queue.receive(10);

    expect(received).toEqual([]);
    expect(existsSync(join(dir, abandoned))).toBe(false);
    expect(existsSync(join(dir, inProgress))).toBe(true);
  });

  it('rejects a negative delay before storing any job of the send', async () => {
    const queue = fileQueue(dir);

    await expect(
      queue.send([
        { body: 'fine', delaySeconds: 0 },
        { body: 'bad', delaySeconds: -1 },
      ]),
    ).rejects.toThrow(RangeError);

    expect(jobFiles()).toEqual([]);
  });

  it('leaves only whole jobs, as many as were reported stored, when the sender is killed with SIGKILL mid-stream', async () => {
    // node with tsx's loader, not the tsx command: that one runs the script in a child process of its own, which a
    // SIGKILL of the command would leave running.
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/file-queue-writer.ts', dir, '1000'], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.split('\n').length > 100) child.kill('SIGKILL');
    });
    // 'close' comes once the output is read to its end: every count the writer printed before it died is in it.
    const signal = await new Promise<NodeJS.Signals | null>((resolveClose) =>
      child.once('close', (_code, closeSignal) => resolveClose(closeSignal)),
    );
    const reported = Math.max(
      0,
      ...stdout
        .split('\n')
        .filter((line) => /^\d+$/.test(line))
        .map(Number),
    );

    expect({ signal, stderr }).toEqual({ signal: 'SIGKILL', stderr: '' });
    expect(reported).toBeLessThan(1000);
    const stored = jobFiles().map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as { body: string });
    // The one send in flight when the signal came may or may not have been stored, but never in part.
    expect(stored.length).toBeGreaterThanOrEqual(reported);
    expect(stored.length).toBeLessThanOrEqual(reported + 1);
    expect(stored.map((job) => (JSON.parse(job.body) as { n: number }).n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: stored.length }, (_, n) => n),
    );
    // What the killed writer left half-done is cleaned up by the next receive.
    await fileQueue(dir).receive(0);
    expect(readdirSync(dir).filter((name) => !JOB_FILE.test(name))).toEqual([]);
  });
});
