/**
 * Issue 6: Suggest Decision over 1,000 and 10,000 judgments in one organization (each size in an API key of its
 * own) — latency over HTTP on the local stack and DynamoDB consumed capacity per call. The judgments are seeded
 * through Add Activities, 100 records per call: 50 matters (10 subjects × 5 changes) across 20 documents and 40
 * reviewers. A call reads at most 1,000 index entries per scope tried, so its cost must stop growing with the
 * organization past that size.
 */
import { median, percentile, pool, startBenchStack, type BenchStack } from './harness';

const RUNS = 20;
const BATCH = 100;
const CONCURRENCY = 8;
const DOCUMENTS = 20;
const REVIEWERS = 40;
const SUBJECTS = [
  'checkout button',
  'pricing page',
  'onboarding wizard',
  'invoice template',
  'login form',
  'search bar',
  'settings menu',
  'profile avatar',
  'export dialog',
  'billing address',
];
const CHANGES = ['rename', 'recolour', 'remove', 'translate', 'resize'];
const REASONS = [
  'Matches the brand guide',
  'Confuses first-time users',
  'Requested by support',
  'Breaks the mobile layout',
  'Legal asked for it',
];

/**
 * Judgment `n`: a suggestion accepted or rejected, ~400 bytes as sent. Even matters lean approve, odd ones
 * reject; one judgment in 7 (7 is prime to the 50 matters, so every matter gets some) goes the other way.
 */
function judgment(n: number) {
  const matter = n % (SUBJECTS.length * CHANGES.length);
  const leansApprove = matter % 2 === 0;
  const approve = n % 7 === 0 ? !leansApprove : leansApprove;
  // Each round of 50 (one judgment per matter) by another reviewer, so a matter is judged by all 40 in turn.
  const reviewer = Math.floor(n / 50) % REVIEWERS;
  return {
    featureType: 'comment',
    actionType: approve ? 'comment_annotation.suggestion_accept' : 'comment_annotation.suggestion_reject',
    actionUser: { userId: `reviewer-${reviewer}`, name: `Reviewer ${reviewer}` },
    targetEntityId: `annotation-${n}`,
    entityTargetData: {
      suggestion: `${CHANGES[Math.floor(matter / SUBJECTS.length)]} the ${SUBJECTS[matter % SUBJECTS.length]}`,
      section: `Section ${n % 12}`,
    },
    entityData: {
      reason: REASONS[n % REASONS.length],
      comment: `Reviewed in round ${Math.floor(n / 100)} together with the rest of the batch.`,
    },
  };
}

async function seed(
  bench: BenchStack,
  headers: Record<string, string>,
  organizationId: string,
  total: number,
): Promise<number> {
  const started = performance.now();
  await pool(
    Array.from({ length: total / BATCH }, (_, batch) => async () => {
      const documentId = `doc-${String(batch % DOCUMENTS).padStart(2, '0')}`;
      const activities = Array.from({ length: BATCH }, (_, i) => judgment(batch * BATCH + i));
      const response = await bench.post('/v2/activities/add', { organizationId, documentId, activities }, headers);
      if (response.status !== 200) throw new Error(`Add Activities failed: ${JSON.stringify(response.body)}`);
    }),
    CONCURRENCY,
  );
  return (performance.now() - started) / 1000;
}

interface Case {
  name: string;
  data: Record<string, unknown>;
}

const cases = (organizationId: string): Case[] => [
  {
    name: 'document scope (doc has precedent)',
    data: { query: 'rename the checkout button', organizationId, documentId: 'doc-00' },
  },
  { name: 'organization scope', data: { query: 'rename the checkout button', organizationId } },
  {
    name: 'document without precedent → organization',
    data: { query: 'rename the checkout button', organizationId, documentId: 'doc-new' },
  },
  {
    name: 'no precedent anywhere (document → organization → all content)',
    data: { query: 'quarterly revenue forecast', organizationId, documentId: 'doc-00' },
  },
];

/** Each case RUNS times, one call at a time; capacity is that of the last call (the first pays once-per-process reads). */
async function measure(
  bench: BenchStack,
  headers: Record<string, string>,
  size: number,
  organizationId: string,
): Promise<string[]> {
  const rows: string[] = [];
  for (const { name, data } of cases(organizationId)) {
    const ms: number[] = [];
    let last = { read: 0, calls: 0 };
    let outcome = '';
    for (let run = 0; run < RUNS; run += 1) {
      const {
        value,
        ms: elapsed,
        capacity,
      } = await bench.meter.measure(() => bench.post('/v2/memory/suggest', data, headers));
      if (value.status !== 200) throw new Error(`Suggest failed: ${JSON.stringify(value.body)}`);
      ms.push(elapsed);
      last = capacity;
      const primary = value.body.result.primary;
      outcome =
        primary === null
          ? 'null'
          : `${primary.recommendation} ${primary.confidence} (${primary.scope}, ${primary.basedOn})`;
    }
    rows.push(
      `| ${size.toLocaleString('en')} | ${name} | ${outcome} | ${median(ms).toFixed(0)} | ${percentile(ms, 95).toFixed(0)} | ${last.read.toFixed(1)} | ${last.calls} |`,
    );
  }
  return rows;
}

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const rows: string[] = [];
    const seeding: string[] = [];
    for (const size of [1_000, 10_000]) {
      const { headers } = await bench.newApiKey();
      await bench.enableActivityLogs(headers);
      const organizationId = `bench-${size}`;
      seeding.push(
        `${size.toLocaleString('en')} judgments seeded in ${(await seed(bench, headers, organizationId, size)).toFixed(1)} s`,
      );
      rows.push(...(await measure(bench, headers, size, organizationId)));
    }
    console.log(`\nSuggest Decision, ${RUNS} calls per case, one at a time (${seeding.join('; ')})\n`);
    console.log(
      '| judgments in the organization | case | primary (scope, basedOn) | latency median ms | p95 ms | read capacity | DynamoDB calls |',
    );
    console.log('|---:|---|---|---:|---:|---:|---:|');
    for (const row of rows) console.log(row);
  } finally {
    await bench.stack.stop();
  }
}
