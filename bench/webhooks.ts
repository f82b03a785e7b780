/**
 * Issue 14: the webhook pipeline on the local stack (stream poller → events worker → file queue → delivery
 * worker → a receiver on 127.0.0.1). Reports the time from the causing request's answer to the first attempt
 * (p50, p95), deliveries per second to a receiver that answers at once, write capacity per message and per
 * delivery, the same with a receiver that fails the first two attempts of every message, and what the pipeline
 * writes for an API key without webhooks (nothing).
 *
 * The retry schedule runs 60 times faster here (WEBHOOK_SCHEDULE_DIVISOR=60: 5 s → 83 ms, 5 min → 5 s) so the
 * failing-receiver run ends in seconds; first attempts have no delay, so the latency and throughput figures are
 * those of the real schedule.
 */
import { percentile, startBenchStack, type BenchStack } from './harness';
import { startReceiver, type Receiver, type Script } from '../test/support/webhook-receiver';

const LATENCY_RUNS = 50;
const THROUGHPUT_MESSAGES = 1000;
const THROUGHPUT_RUNS = 3;
const PER_REQUEST = 100;
const FAILING_MESSAGES = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Tenant {
  headers: Record<string, string>;
}

async function tenant(bench: BenchStack, options: { webhooks: boolean; receivers?: Receiver[] }): Promise<Tenant> {
  const { headers } = await bench.newApiKey();
  await bench.enableActivityLogs(headers);
  if (options.webhooks) {
    await bench.post('/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, headers);
    for (const receiver of options.receivers ?? []) {
      const created = await bench.post(
        '/v2/workspace/advancedwebhook/endpoints/create',
        { url: receiver.url },
        headers,
      );
      if (created.status !== 200) throw new Error(`endpoint: ${JSON.stringify(created.body)}`);
    }
  }
  return { headers };
}

const activity = (id: string) => ({ id, featureType: 'comment', actionType: 'comment.add', targetEntityId: `t-${id}` });
const activityIdOf = (body: string) => (JSON.parse(body) as { data: { id: string } }).data.id;

async function addMany(bench: BenchStack, who: Tenant, prefix: string, count: number): Promise<void> {
  const requests = [];
  for (let first = 0; first < count; first += PER_REQUEST) {
    const activities = Array.from({ length: Math.min(PER_REQUEST, count - first) }, (_, i) =>
      activity(`${prefix}-${first + i}`),
    );
    requests.push(bench.post('/v2/activities/add', { organizationId: 'bench-org', activities }, who.headers));
  }
  for (const response of await Promise.all(requests))
    if (response.status !== 200) throw new Error(JSON.stringify(response.body));
}

/** Write capacity of the whole run (requests and workers), from the first request until every delivery settled. */
async function writesOf(bench: BenchStack, work: () => Promise<void>, settled: () => boolean): Promise<number> {
  const { capacity } = await bench.meter.measure(async () => {
    await work();
    while (!settled()) await sleep(50);
    // The delivery worker records an outcome after the receiver answered: let it finish.
    await sleep(1500);
  });
  return capacity.write;
}

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  const receivers: Receiver[] = [];
  const receiver = async (script?: Script) => {
    const started = await startReceiver(script);
    receivers.push(started);
    return started;
  };
  try {
    // 1. Latency: one activity at a time, from the answer to the request to the receiver seeing it.
    const quick = await receiver();
    const single = await tenant(bench, { webhooks: true, receivers: [quick] });
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_RUNS; i += 1) {
      const id = `lat-${i}`;
      await bench.post(
        '/v2/activities/add',
        { organizationId: 'bench-org', activities: [activity(id)] },
        single.headers,
      );
      const answered = Date.now();
      while (!quick.requests.some((request) => activityIdOf(request.body) === id)) await sleep(2);
      const arrived = quick.requests.find((request) => activityIdOf(request.body) === id)?.at ?? Date.now();
      latencies.push(arrived - answered);
    }

    // 2. Throughput and write capacity: no webhooks (baseline), one endpoint, two endpoints.
    const baseline = await tenant(bench, { webhooks: false });
    const baselineWrites = await writesOf(
      bench,
      () => addMany(bench, baseline, 'base', THROUGHPUT_MESSAGES),
      () => true,
    );
    const { capacity: requestOnly } = await bench.meter.measure(() =>
      addMany(bench, baseline, 'base2', THROUGHPUT_MESSAGES),
    );
    const { capacity: afterRequests } = await bench.meter.measure(() => sleep(3000));

    // Throughput runs THROUGHPUT_RUNS times, each on a new key and receiver: the median is reported (this machine's
    // two cores are shared by the stack and DynamoDB Local, so one run varies by ±10 %).
    const runs: Array<{ perSecond: number; endToEnd: number; writes: number }> = [];
    for (let run = 0; run < THROUGHPUT_RUNS; run += 1) {
      const fast = await receiver();
      const one = await tenant(bench, { webhooks: true, receivers: [fast] });
      const started = Date.now();
      const writes = await writesOf(
        bench,
        () => addMany(bench, one, `one${run}`, THROUGHPUT_MESSAGES),
        () => fast.requests.length >= THROUGHPUT_MESSAGES,
      );
      const times = fast.requests.map((request) => request.at);
      const firstAt = Math.min(...times);
      const lastAt = Math.max(...times);
      runs.push({
        perSecond: THROUGHPUT_MESSAGES / ((lastAt - firstAt) / 1000),
        endToEnd: (lastAt - started) / 1000,
        writes,
      });
      console.log(
        `throughput run ${run + 1}: first delivery ${firstAt - started} ms after the first request, last ${lastAt - started} ms`,
      );
    }
    const perSecond = runs.map((run) => run.perSecond).sort((a, b) => a - b);
    const oneWrites = runs[0].writes;
    const endToEnd = percentile(
      runs.map((run) => run.endToEnd),
      50,
    );

    const left = await receiver();
    const right = await receiver();
    const two = await tenant(bench, { webhooks: true, receivers: [left, right] });
    const twoWrites = await writesOf(
      bench,
      () => addMany(bench, two, 'two', THROUGHPUT_MESSAGES),
      () => left.requests.length >= THROUGHPUT_MESSAGES && right.requests.length >= THROUGHPUT_MESSAGES,
    );

    // 3. A receiver that fails the first two attempts of every message.
    const seen = new Map<string, number>();
    const flaky = await receiver((_, request) => {
      const id = String(request.headers['webhook-id']);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      return n <= 2 ? 500 : 200;
    });
    const failing = await tenant(bench, { webhooks: true, receivers: [flaky] });
    const baselineSmall = (baselineWrites / THROUGHPUT_MESSAGES) * FAILING_MESSAGES;
    const failingWrites = await writesOf(
      bench,
      () => addMany(bench, failing, 'flaky', FAILING_MESSAGES),
      () => flaky.requests.length >= 3 * FAILING_MESSAGES,
    );

    const perMessageAndDelivery = (oneWrites - baselineWrites) / THROUGHPUT_MESSAGES;
    const perDelivery = (twoWrites - oneWrites) / THROUGHPUT_MESSAGES;
    const rows: Array<[string, string, string]> = [
      ['first attempt after the answer, p50', `${percentile(latencies, 50)} ms`, '≤ 1,000 ms'],
      ['first attempt after the answer, p95', `${percentile(latencies, 95)} ms`, ''],
      [
        `deliveries per second (${THROUGHPUT_MESSAGES} messages, receiver answers at once; median of ${THROUGHPUT_RUNS} runs, range)`,
        `${percentile(perSecond, 50).toFixed(0)} (${perSecond[0].toFixed(0)}–${perSecond[perSecond.length - 1].toFixed(0)})`,
        '≥ 200',
      ],
      [`end to end: first request to last delivery (median)`, `${endToEnd.toFixed(1)} s`, ''],
      [
        'write capacity per message (message item, its queueing; no delivery)',
        (perMessageAndDelivery - perDelivery).toFixed(2),
        '',
      ],
      [
        'write capacity per delivery that succeeds at once (delivery item, attempt, outcome)',
        perDelivery.toFixed(2),
        '',
      ],
      [
        'write capacity per message with a receiver failing twice (3 attempts)',
        ((failingWrites - baselineSmall) / FAILING_MESSAGES).toFixed(2),
        '',
      ],
      [
        'writes by the pipeline for an API key without webhooks (after its requests)',
        afterRequests.write.toFixed(1),
        '0',
      ],
    ];
    console.log(
      `\nWebhook pipeline on the local stack (DynamoDB Local; latency on this machine, capacity as DynamoDB bills it)\n`,
    );
    console.log('| measure | value | target |');
    console.log('|---|---:|---:|');
    for (const [name, value, target] of rows) console.log(`| ${name} | ${value} | ${target} |`);
    console.log(
      `\n(Add Activities itself: ${(requestOnly.write / THROUGHPUT_MESSAGES).toFixed(2)} WCU per record, left out above.)`,
    );
  } finally {
    await Promise.all(receivers.map((r) => r.close()));
    await bench.stack.stop();
  }
}
