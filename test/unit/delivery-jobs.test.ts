/** The delivery queue's jobs (shared/domain/delivery/jobs.ts): delays longer than SQS allows are served in hops. */
import { MAX_DELAY_SECONDS, type QueuedJob } from '../../shared/adapters/queue/queue';
import { enqueue, isDue, parseJob, type DeliveryJob } from '../../shared/domain/delivery/jobs';

const NOW = 1_767_225_600_000;
const job = (dueAt: number): DeliveryJob => ({
  kind: 'deliver',
  apiKeyId: 'key_1',
  messageId: 'msg_1',
  endpointId: 'ep_1',
  attempt: 2,
  dueAt,
});

async function sent(jobs: DeliveryJob[]): Promise<QueuedJob[]> {
  const queued: QueuedJob[] = [];
  await enqueue({ send: async (batch) => void queued.push(...batch) }, jobs, NOW);
  return queued;
}

describe('webhook jobs', () => {
  it('queues a job due now without delay, and one due later with the wait in whole seconds', async () => {
    expect((await sent([job(NOW), job(NOW + 4_200)])).map((queued) => queued.delaySeconds)).toEqual([0, 5]);
  });

  it('caps the delay at SQS maximum of 15 minutes: a 10 h wait is served in hops', async () => {
    const [queued] = await sent([job(NOW + 10 * 60 * 60 * 1000)]);

    expect(queued.delaySeconds).toBe(MAX_DELAY_SECONDS);
    expect(isDue(parseJob(queued.body), NOW + MAX_DELAY_SECONDS * 1000)).toBe(false);
    expect(isDue(parseJob(queued.body), NOW + 10 * 60 * 60 * 1000)).toBe(true);
  });

  it('reads back what it queued, and refuses a body that is not a job', async () => {
    const [queued] = await sent([job(NOW)]);

    expect(parseJob(queued.body)).toEqual(job(NOW));
    expect(() => parseJob('{"kind":"other"}')).toThrow('Not a delivery job.');
  });
});
