/**
 * Versions of an editor (decisions §14, issue 32 item 1): create, read and restore of an editor whose Yjs state is
 * ~1 MB, and a list of 20 versions, over HTTP on the local stack (latency) with DynamoDB capacity per call; and what
 * an automatic version costs per edited editor-hour at list prices (goals: ≤ 1 s each, a list of 20 ≤ 5 read units).
 */
import { randomBytes } from 'node:crypto';
import { measuredRuns, startBenchStack, type Row } from './harness';

const RUNS = 5;
/** Characters of text: a Yjs state of about 1 MB. */
const TEXT_CHARS = 1_000_000;

/** us-east-1 on-demand list prices. */
const PRICE = { perMillionWrites: 1.25, perMillionReads: 0.25, perGbMonth: 0.25 };

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { headers } = await bench.newApiKey();
    const ids = { organizationId: 'bench-versions-org', documentId: 'doc', editorId: 'big' };
    const post = (path: string, data: Record<string, unknown> = {}) => bench.post(path, { ...ids, ...data }, headers);
    const ok = async (operation: string, answer: Promise<{ status: number; body: any }>) => {
      const { status, body } = await answer;
      if (status !== 200) throw new Error(`${operation} failed: ${JSON.stringify(body).slice(0, 500)}`);
      return body;
    };
    const measure = (
      operation: string,
      runs: number,
      request: (i: number) => Promise<unknown>,
      prepare?: (i: number) => Promise<unknown>,
    ) => measuredRuns(bench, operation, runs, request, { prepare, quietMs: 300 });

    // Warm-up: the first request of each path loads its handler.
    await ok('warm add', post('/v2/crdt/add', { editorId: 'warm', type: 'text', data: 'x' }));
    const warm = await ok('warm create', post('/v2/crdt/versions/create', { editorId: 'warm' }));
    await ok('warm list', post('/v2/crdt/versions/get', { editorId: 'warm' }));
    await ok('warm get', post('/v2/crdt/get', { editorId: 'warm', versionId: warm.result.data.versionId }));
    await ok(
      'warm restore',
      post('/v2/crdt/versions/restore', { editorId: 'warm', versionId: warm.result.data.versionId }),
    );

    const text = randomBytes(TEXT_CHARS).toString('base64').slice(0, TEXT_CHARS);
    await ok('add', post('/v2/crdt/add', { type: 'text', data: text }));
    const rows: Row[] = [];
    const made: string[] = [];
    rows.push(
      await measure('create a version (manual)', RUNS, async () => {
        made.push((await ok('create', post('/v2/crdt/versions/create', { name: 'bench' }))).result.data.versionId);
      }),
    );
    const size = Number((await ok('list', post('/v2/crdt/versions/get', { pageSize: 1 }))).result.data[0].size);
    rows.push(
      await measure('read a version, format json', RUNS, (i) =>
        ok('get', post('/v2/crdt/get', { versionId: made[i % made.length] })),
      ),
    );
    rows.push(
      await measure('read a version, format yjs', RUNS, (i) =>
        ok('get', post('/v2/crdt/get', { versionId: made[i % made.length], format: 'yjs' })),
      ),
    );
    // Each restore follows a change of one character (not measured), so it has something to undo.
    rows.push(
      await measure(
        'restore a version (keeps a restore version, one edit)',
        RUNS,
        () => ok('restore', post('/v2/crdt/versions/restore', { versionId: made[0] })),
        (i) =>
          ok(
            'update',
            post('/v2/crdt/update', { type: 'text', data: `${String.fromCharCode(65 + i)}${text.slice(1)}` }),
          ),
      ),
    );
    while (made.length < 22)
      made.push((await ok('create', post('/v2/crdt/versions/create', {}))).result.data.versionId);
    rows.push(
      await measure('list 20 versions (summaries)', RUNS, () =>
        ok('list', post('/v2/crdt/versions/get', { pageSize: 20 })),
      ),
    );

    console.log(
      `\nVersions of one editor with a Yjs state of ${size} bytes (${Math.ceil(size / (300 * 1024))} parts); medians of ${RUNS}`,
    );
    console.log('Reads strongly consistent (1 RCU per 4 KB); capacity as DynamoDB Local reports it per call.\n');
    console.log('| operation | latency ms | read units | write units | DynamoDB calls |');
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows)
      console.log(
        `| ${r.operation} | ${r.ms.toFixed(0)} | ${r.read.toFixed(1)} | ${r.write.toFixed(1)} | ${r.calls} |`,
      );

    // An automatic version: what the worker does for one due editor (the LOG item, the editor read, the version
    // written: the create row minus its request's own reads), plus the changes reader's check per stream batch.
    const create = rows[0];
    const storageMonth = (size / 1024 ** 3) * PRICE.perGbMonth;
    const storage30Days = storageMonth; // kept 30 days (TTL)
    const versionCost = (create.write * PRICE.perMillionWrites + (create.read + 1) * PRICE.perMillionReads) / 1e6;
    const checksPerHour = 3600; // at most one conditional Put per editor per stream batch: one a second, typing all hour
    const checkCost = (checksPerHour * PRICE.perMillionWrites) / 1e6;
    console.log('\nAn automatic version at list prices (us-east-1 on-demand), this editor:');
    console.log(
      `- keeping it: ${create.write.toFixed(0)} write units and ${(create.read + 1).toFixed(0)} read units: $${versionCost.toFixed(5)}`,
    );
    console.log(`- storing it for its 30 days: $${storage30Days.toFixed(5)}`);
    console.log(
      `- per edited editor-hour: 1 version (edits all hour: CRDT_VERSION_MAX_SECONDS) to 12 (a burst every 5 min: CRDT_VERSION_QUIET_SECONDS): $${(versionCost + storage30Days).toFixed(5)} to $${(12 * (versionCost + storage30Days)).toFixed(4)}, plus the version checks: at most ${checksPerHour} conditional Puts (one per stream batch) $${checkCost.toFixed(4)}`,
    );
  } finally {
    await bench.stack.stop();
  }
}
