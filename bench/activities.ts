/**
 * Issue 5: Get Activities filtered by document, first and tenth page of 100, on a log of 1,000 and of 100,000
 * records in one organization and document — latency over HTTP on the local stack and DynamoDB consumed capacity
 * per page. A page must cost the same at both sizes (a key-condition cursor on the document's timeline, never an
 * offset or a filter over the log). The logs are seeded through Add Activities, 100 records per call.
 *
 * Issue 11 (bounded reads): the same logs read with an actionTypes filter that matches nothing. The filter is a
 * FilterExpression on the organization's timeline, so a call examines at most 5 × pageSize entries and answers an
 * empty page with a token: every call must cost the same, whatever the log's size and however far in.
 */
import { median, percentile, pool, startBenchStack, type BenchStack } from './harness';

const PAGE_SIZE = 100;
const PAGES = 10;
const RUNS = 5;
const BATCH = 100;
const CONCURRENCY = 8;

/**
 * A realistic record (~600 bytes of content): the activity of a comment thread, its users and targets varying.
 * Numbers are zero-padded so every record has the same size and page costs compare exactly across log sizes.
 */
function record(n: number) {
  const pad = (value: number) => String(value).padStart(6, '0');
  return {
    featureType: n % 7 === 0 ? 'custom' : 'comment',
    actionType: n % 7 === 0 ? 'custom.approve' : 'comment.update',
    actionUser: { userId: `user-${pad(n % 50)}`, name: `User ${pad(n % 50)}`, email: `user${pad(n % 50)}@example.com` },
    targetEntityId: `annotation-${pad(Math.floor(n / 10))}`,
    changes: { from: { status: 'open' }, to: { status: 'in_progress' } },
    entityData: {
      text: `Comment number ${pad(n)} on the proposal, with enough words to look like a real one.`,
      n: pad(n),
    },
    displayMessageTemplate: '{{actionUser.name}} changed the status of a comment to {{to.status}}',
    displayMessageTemplateData: { to: { status: 'in_progress' } },
    actionIcon: 'https://example.com/icons/status.svg',
  };
}

async function seed(bench: BenchStack, headers: Record<string, string>, organizationId: string, total: number) {
  const started = performance.now();
  const latencies: number[] = [];
  await pool(
    Array.from({ length: total / BATCH }, (_, batch) => async () => {
      const activities = Array.from({ length: BATCH }, (_, i) => record(batch * BATCH + i));
      const callStarted = performance.now();
      const response = await bench.post(
        '/v2/activities/add',
        { organizationId, documentId: 'doc', activities },
        headers,
      );
      if (response.status !== 200) throw new Error(`Add Activities failed: ${JSON.stringify(response.body)}`);
      latencies.push(performance.now() - callStarted);
    }),
    CONCURRENCY,
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

/**
 * Waits until the service's client has made no DynamoDB call for a second (at most two minutes): the stream's
 * workers (webhook events) work through the seeded records after the seeding, and their calls share the meter.
 */
async function settle(bench: BenchStack): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const { capacity } = await bench.meter.measure(() => new Promise((resolve) => setTimeout(resolve, 1000)));
    if (capacity.calls === 0) return;
  }
}

/** Add Activities calls one at a time, metered (seeding runs calls concurrently, so it is not). */
async function measuredAdds(bench: BenchStack, headers: Record<string, string>) {
  const results: Array<{ ms: number; write: number; read: number; calls: number }> = [];
  for (let call = 0; call < RUNS; call += 1) {
    const activities = Array.from({ length: BATCH }, (_, i) => record(call * BATCH + i));
    const { value, ms, capacity } = await bench.meter.measure(() =>
      bench.post('/v2/activities/add', { organizationId: 'bench-measure', documentId: 'doc', activities }, headers),
    );
    if (value.status !== 200) throw new Error(`Add Activities failed: ${JSON.stringify(value.body)}`);
    results.push({ ms, write: capacity.write, read: capacity.read, calls: capacity.calls });
  }
  return results;
}

interface PageFigures {
  query: string;
  page: number;
  records: number;
  ms: number[];
  read: number;
  calls: number;
}

/** A listing measured in the bench: its name in the table, its filter, and the pages to report. */
interface Listing {
  name: string;
  filter: Record<string, unknown>;
  report: number[];
}

const byDocument: Listing = { name: 'documentId', filter: { documentId: 'doc' }, report: [1, PAGES] };

/** Pages of a filter that matches nothing: a page examines 500 entries, so 1,000 records are 2 full pages. */
const matchingNothing = (size: number): Listing => ({
  name: 'actionTypes matching nothing',
  filter: { actionTypes: ['comment.never-sent'] },
  report: size > 1_000 ? [1, 10, size / (5 * PAGE_SIZE)] : [1, 2],
});

/**
 * Walks the listing's pages up to the last reported one RUNS times; returns the figures of the reported pages.
 * Capacity is that of the last run: the first one also pays once-per-process reads (credentials, the page-token
 * key).
 */
async function readPages(
  bench: BenchStack,
  headers: Record<string, string>,
  organizationId: string,
  listing: Listing,
): Promise<PageFigures[]> {
  const figures = new Map<number, PageFigures>();
  const last = Math.max(...listing.report);
  for (let run = 0; run < RUNS; run += 1) {
    let pageToken: string | undefined;
    for (let page = 1; page <= last; page += 1) {
      const { value, ms, capacity } = await bench.meter.measure(() =>
        bench.post(
          '/v2/activities/get',
          { organizationId, ...listing.filter, pageSize: PAGE_SIZE, ...(pageToken ? { pageToken } : {}) },
          headers,
        ),
      );
      if (value.status !== 200) throw new Error(`Get Activities failed: ${JSON.stringify(value.body)}`);
      pageToken = value.body.result.pageToken;
      if (listing.report.includes(page)) {
        const entry: PageFigures = figures.get(page) ?? {
          query: listing.name,
          page,
          records: 0,
          ms: [],
          read: 0,
          calls: 0,
        };
        figures.set(page, {
          ...entry,
          records: value.body.result.data.length,
          ms: [...entry.ms, ms],
          read: capacity.read,
          calls: capacity.calls,
        });
      }
      if (pageToken === undefined) break;
    }
  }
  return [...figures.values()];
}

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { headers } = await bench.newApiKey();
    await bench.enableActivityLogs(headers);

    const logs: Array<{ size: number; organizationId: string }> = [
      { size: 1_000, organizationId: 'bench-small' },
      { size: 100_000, organizationId: 'bench-large' },
    ];
    const seeding: string[] = [];
    const adds: Array<{ ms: number; write: number; read: number; calls: number }> = [];
    const rows: string[] = [];
    for (const log of logs) {
      const { seconds, latencies } = await seed(bench, headers, log.organizationId, log.size);
      if (log === logs[0]) adds.push(...(await measuredAdds(bench, headers)));
      await settle(bench);
      seeding.push(
        `| ${log.size.toLocaleString('en')} | ${latencies.length} | ${seconds.toFixed(1)} | ${median(latencies).toFixed(0)} | ${percentile(latencies, 95).toFixed(0)} |`,
      );
      for (const listing of [byDocument, matchingNothing(log.size)]) {
        for (const page of await readPages(bench, headers, log.organizationId, listing)) {
          rows.push(
            `| ${log.size.toLocaleString('en')} | ${page.query} | ${page.page} | ${page.records} | ${median(page.ms).toFixed(0)} | ${percentile(page.ms, 95).toFixed(0)} | ${page.read.toFixed(1)} | ${page.calls} |`,
          );
        }
      }
    }

    console.log(`\nAdd Activities, ${BATCH} records (~600 B each) per call`);
    console.log(
      'Transactional writes estimated at 2 WCU per item per KB (DynamoDB Local under-reports them); GSI writes not included (bench/cost.ts bills them).\n',
    );
    console.log(
      `one call at a time (${adds.length} calls, warm): latency median ${median(adds.map((a) => a.ms)).toFixed(0)} ms, ` +
        `${median(adds.map((a) => a.write)).toFixed(0)} WCU, ${median(adds.map((a) => a.read)).toFixed(1)} RCU, ${median(adds.map((a) => a.calls))} DynamoDB calls\n`,
    );
    console.log(`| log size | calls (${CONCURRENCY} concurrent) | seeding s | latency median ms | p95 ms |`);
    console.log('|---:|---:|---:|---:|---:|');
    for (const line of seeding) console.log(line);
    console.log(`\nGet Activities, pageSize ${PAGE_SIZE}, newest first (latency over ${RUNS} runs)\n`);
    console.log('| log size | filter | page | records | latency median ms | p95 ms | read capacity | DynamoDB calls |');
    console.log('|---:|---|---:|---:|---:|---:|---:|---:|');
    for (const line of rows) console.log(line);
  } finally {
    await bench.stack.stop();
  }
}
