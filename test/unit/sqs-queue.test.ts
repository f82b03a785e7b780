import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  BatchResultErrorEntry,
  SendMessageBatchCommand,
  SendMessageBatchCommandOutput,
  SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs';
import { QueueSendError, sqsQueue, type SqsBatchSender } from '../../shared/adapters/queue/sqs-queue';
import type { JobQueue } from '../../shared/adapters/queue/queue';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries';

/**
 * An SQS stand-in: records each SendMessageBatch and answers it; `failures` decides, per call, which entries fail
 * (by body) and whether as the sender's fault.
 */
class FakeSqs implements SqsBatchSender {
  readonly calls: Array<{ QueueUrl?: string; Entries: SendMessageBatchRequestEntry[] }> = [];

  constructor(
    private readonly failures: (
      entry: SendMessageBatchRequestEntry,
      call: number,
    ) => Omit<BatchResultErrorEntry, 'Id'> | undefined = () => undefined,
  ) {}

  async send(command: SendMessageBatchCommand): Promise<SendMessageBatchCommandOutput> {
    const entries = command.input.Entries ?? [];
    this.calls.push({ QueueUrl: command.input.QueueUrl, Entries: entries });
    const call = this.calls.length;
    const failed: BatchResultErrorEntry[] = [];
    const successful = [];
    for (const entry of entries) {
      const failure = this.failures(entry, call);
      if (failure === undefined)
        successful.push({ Id: entry.Id, MessageId: `m-${call}-${entry.Id}`, MD5OfMessageBody: '' });
      else failed.push({ Id: entry.Id, ...failure });
    }
    return { Successful: successful, Failed: failed, $metadata: {} };
  }

  /** Every body SQS accepted, in the order sent. */
  stored(): string[] {
    return this.calls.flatMap((call, index) =>
      call.Entries.filter((entry) => this.failures(entry, index + 1) === undefined).map((entry) =>
        String(entry.MessageBody),
      ),
    );
  }
}

const jobs = (count: number, delaySeconds = 0) =>
  Array.from({ length: count }, (_, n) => ({ body: `job-${n}`, delaySeconds }));
const throttled = { Code: 'InternalError', Message: 'try again', SenderFault: false };

describe('SQS queue', () => {
  it('sends jobs in batches of at most 10 entries to the queue', async () => {
    const sqs = new FakeSqs();

    await sqsQueue(QUEUE_URL, sqs).send(jobs(23));

    expect(sqs.calls.map((call) => call.Entries.length)).toEqual([10, 10, 3]);
    expect(sqs.calls.every((call) => call.QueueUrl === QUEUE_URL)).toBe(true);
    expect(sqs.stored().sort()).toEqual(
      jobs(23)
        .map((job) => job.body)
        .sort(),
    );
  });

  it('keeps a batch under 256 KiB of bodies', async () => {
    const sqs = new FakeSqs();
    const big = 'x'.repeat(100 * 1024);

    await sqsQueue(QUEUE_URL, sqs).send([1, 2, 3, 4, 5].map(() => ({ body: big, delaySeconds: 0 })));

    expect(sqs.calls.map((call) => call.Entries.length)).toEqual([2, 2, 1]);
  });

  it('passes each job’s delay as the entry’s DelaySeconds', async () => {
    const sqs = new FakeSqs();

    await sqsQueue(QUEUE_URL, sqs).send([
      { body: 'now', delaySeconds: 0 },
      { body: 'later', delaySeconds: 300 },
      { body: 'longest', delaySeconds: 900 },
    ]);

    expect(sqs.calls[0].Entries.map((entry) => [entry.MessageBody, entry.DelaySeconds])).toEqual([
      ['now', 0],
      ['later', 300],
      ['longest', 900],
    ]);
  });

  it('sends again only the entries SQS reported as failed, until they are stored', async () => {
    const sqs = new FakeSqs((entry, call) => (entry.MessageBody === 'job-3' && call < 3 ? throttled : undefined));

    await sqsQueue(QUEUE_URL, sqs).send(jobs(5));

    expect(sqs.calls.map((call) => call.Entries.map((entry) => entry.MessageBody))).toEqual([
      ['job-0', 'job-1', 'job-2', 'job-3', 'job-4'],
      ['job-3'],
      ['job-3'],
    ]);
  });

  it('throws, naming SQS’s error, when an entry still fails after the retries', async () => {
    const sqs = new FakeSqs((entry) => (entry.MessageBody === 'job-1' ? throttled : undefined));

    const sent = sqsQueue(QUEUE_URL, sqs).send(jobs(3));

    await expect(sent).rejects.toThrow(QueueSendError);
    await expect(sent).rejects.toThrow('1 job(s) could not be sent to the queue: InternalError (try again).');
    expect(sqs.calls.length).toBeGreaterThan(1);
    expect(sqs.calls.slice(1).every((call) => call.Entries.every((entry) => entry.MessageBody === 'job-1'))).toBe(true);
  });

  it('throws without sending again an entry SQS refused as the sender’s fault', async () => {
    const sqs = new FakeSqs((entry) =>
      entry.MessageBody === 'job-0' ? { Code: 'InvalidMessageContents', Message: 'bad', SenderFault: true } : undefined,
    );

    await expect(sqsQueue(QUEUE_URL, sqs).send(jobs(2))).rejects.toThrow('InvalidMessageContents');

    expect(sqs.calls).toHaveLength(1);
  });

  it.each([-1, 901, 1.5])('refuses a delay of %p s before sending anything', async (delaySeconds) => {
    const sqs = new FakeSqs();

    await expect(sqsQueue(QUEUE_URL, sqs).send([...jobs(1), { body: 'bad', delaySeconds }])).rejects.toThrow(
      RangeError,
    );

    expect(sqs.calls).toEqual([]);
  });

  it('sends nothing for no jobs', async () => {
    const sqs = new FakeSqs();

    await sqsQueue(QUEUE_URL, sqs).send([]);

    expect(sqs.calls).toEqual([]);
  });
});

describe('delivery queue', () => {
  const saved = { url: process.env.DELIVERY_QUEUE_URL, dir: process.env.DELIVERY_QUEUE_DIR };
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delivery-queue-test-'));
    delete process.env.DELIVERY_QUEUE_URL;
    delete process.env.DELIVERY_QUEUE_DIR;
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const [name, value] of [
      ['DELIVERY_QUEUE_URL', saved.url],
      ['DELIVERY_QUEUE_DIR', saved.dir],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  /** deliveryQueue() of a fresh load of the modules, as a function's cold start sees the environment. */
  function loadDeliveryQueue(): JobQueue {
    let queue: JobQueue | undefined;
    jest.isolateModules(() => {
      const { deliveryQueue } =
        require('../../shared/adapters/queue/delivery-queue') as typeof import('../../shared/adapters/queue/delivery-queue');
      queue = deliveryQueue();
    });
    return queue as JobQueue;
  }

  it('is the SQS queue when DELIVERY_QUEUE_URL is set, even with a folder set too', () => {
    process.env.DELIVERY_QUEUE_URL = QUEUE_URL;
    process.env.DELIVERY_QUEUE_DIR = dir;

    const queue = loadDeliveryQueue();

    expect(queue).toMatchObject({ queueUrl: QUEUE_URL });
  });

  it('is the file queue in DELIVERY_QUEUE_DIR when no URL is set', async () => {
    process.env.DELIVERY_QUEUE_DIR = dir;

    await loadDeliveryQueue().send([{ body: 'job', delaySeconds: 0 }]);

    expect(readdirSync(dir)).toHaveLength(1);
  });

  it('throws naming both settings when neither is set', () => {
    expect(() => loadDeliveryQueue()).toThrow('set DELIVERY_QUEUE_URL (the SQS queue, in AWS) or DELIVERY_QUEUE_DIR');
  });
});
