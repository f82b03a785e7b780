/**
 * Issue 3: Add Users with 100 users, and Get Users pages of 1000 from an organization of 10,000 users — latency
 * over HTTP on the local stack and DynamoDB consumed capacity per call. Page 9 must cost what page 1 costs.
 */
import { median, percentile, startBenchStack } from './harness';

const ORG_USERS = 10_000;
const BATCH = 100;

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { headers } = await bench.newApiKey();
    const organizationId = 'bench-org';
    const adds: Array<{ ms: number; read: number; write: number }> = [];
    for (let batch = 0; batch < ORG_USERS / BATCH; batch += 1) {
      const users = Array.from({ length: BATCH }, (_, i) => {
        const n = batch * BATCH + i;
        return { userId: `user-${String(n).padStart(5, '0')}`, name: `User ${n}`, email: `user${n}@example.com` };
      });
      const { value, ms, capacity } = await bench.meter.measure(() =>
        bench.post('/v2/users/add', { organizationId, users }, headers),
      );
      if (value.status !== 200) throw new Error(`Add Users failed: ${JSON.stringify(value.body)}`);
      adds.push({ ms, read: capacity.read, write: capacity.write });
    }

    const pages: Array<{ page: number; ms: number; read: number; users: number; calls: number }> = [];
    let pageToken: string | undefined;
    for (let page = 1; page <= ORG_USERS / 1000; page += 1) {
      // The profile-copies worker checks each new membership in the background: let it finish first.
      await bench.meter.quiet();
      const { value, ms, capacity } = await bench.meter.measure(() =>
        bench.post('/v2/users/get', { organizationId, pageSize: 1000, ...(pageToken ? { pageToken } : {}) }, headers),
      );
      pages.push({ page, ms, read: capacity.read, users: value.body.result.data.length, calls: capacity.calls });
      pageToken = value.body.result.nextPageToken;
    }

    console.log(
      `\nAdd Users, ${BATCH} users per call (${adds.length} calls, organization growing to ${ORG_USERS} users)`,
    );
    console.log(
      'Transactional writes estimated at 2 WCU per item per KB (DynamoDB Local under-reports them); GSI writes not included.\n',
    );
    console.log('| latency median ms | p95 ms | write capacity per call (median) | read capacity per call (median) |');
    console.log('|---:|---:|---:|---:|');
    console.log(
      `| ${median(adds.map((a) => a.ms)).toFixed(0)} | ${percentile(
        adds.map((a) => a.ms),
        95,
      ).toFixed(0)} | ${median(adds.map((a) => a.write)).toFixed(1)} | ${median(adds.map((a) => a.read)).toFixed(1)} |`,
    );
    console.log(`\nGet Users, pageSize 1000, organization of ${ORG_USERS} users\n`);
    console.log('| page | users | latency ms | read capacity | DynamoDB calls |');
    console.log('|---:|---:|---:|---:|---:|');
    for (const p of pages)
      console.log(`| ${p.page} | ${p.users} | ${p.ms.toFixed(0)} | ${p.read.toFixed(1)} | ${p.calls} |`);
  } finally {
    await bench.stack.stop();
  }
}
