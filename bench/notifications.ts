/**
 * Issue 4: Add Notification with notifyAll in an organization of 5,000 users — latency over HTTP on the local
 * stack and DynamoDB capacity per call (one feed entry per recipient).
 */
import { median, startBenchStack } from './harness';

const MEMBERS = 5_000;
const RUNS = 3;

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { headers } = await bench.newApiKey();
    const organizationId = 'bench-notify-org';
    for (let batch = 0; batch < MEMBERS / 100; batch += 1) {
      const users = Array.from({ length: 100 }, (_, i) => ({ userId: `member-${batch * 100 + i}` }));
      const added = await bench.post('/v2/users/add', { organizationId, users }, headers);
      if (added.status !== 200) throw new Error(`seeding failed: ${JSON.stringify(added.body)}`);
    }
    const runs: Array<{ ms: number; read: number; write: number; calls: number }> = [];
    for (let i = 0; i < RUNS; i += 1) {
      const { value, ms, capacity } = await bench.meter.measure(() =>
        bench.post(
          '/v2/notifications/add',
          {
            organizationId,
            documentId: 'doc',
            createDocument: true,
            notificationId: `broadcast-${i}`,
            actionUser: { userId: 'member-0' },
            displayHeadlineMessageTemplate: '{{actionUser}} posted an update',
            notifyAll: true,
          },
          headers,
        ),
      );
      if (value.status !== 200) throw new Error(`notifyAll failed: ${JSON.stringify(value.body)}`);
      runs.push({ ms, read: capacity.read, write: capacity.write, calls: capacity.calls });
    }
    console.log(`\nAdd Notification with notifyAll, organization of ${MEMBERS} users (${RUNS} runs)\n`);
    console.log('| run | latency ms | write capacity | read capacity | DynamoDB calls |');
    console.log('|---:|---:|---:|---:|---:|');
    runs.forEach((r, i) =>
      console.log(`| ${i + 1} | ${r.ms.toFixed(0)} | ${r.write.toFixed(1)} | ${r.read.toFixed(1)} | ${r.calls} |`),
    );
    console.log(
      `\nmedian latency ${median(runs.map((r) => r.ms)).toFixed(0)} ms; write capacity includes the gsi3 entry of each feed item (2 WCU per recipient).`,
    );
  } finally {
    await bench.stack.stop();
  }
}
