/**
 * CRDT data: Get of an editor whose Yjs state is ~1 MiB (four parts of 300 KB), as JSON and as a Yjs state, and the
 * writes around it — latency over HTTP on the local stack and DynamoDB capacity per call.
 */
import { randomBytes } from 'node:crypto';
import * as Y from 'yjs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { measuredRuns, median, startBenchStack, type BenchStack, type Row } from './harness';
import { transactionWriteUnits } from '../test/support/capacity-meter';

/**
 * Markdown of about `chars` characters as people write it: headings, paragraphs with bold, italic, links and code,
 * lists, quotes, code blocks and a table, repeated; each section's text differs (a counter) so nothing compresses
 * into repeats.
 */
export function sampleMarkdown(chars: number): string {
  const sections: string[] = [];
  let length = 0;
  for (let i = 0; length < chars; i += 1) {
    const section = [
      `## Section ${i}`,
      `Paragraph ${i} with **bold ${i}**, *italic*, ~~struck~~, \`code ${i}\` and a [link](https://example.com/${i}). ${'Plain words follow here. '.repeat(6)}`,
      `- item ${i}.1 with **weight**\n- item ${i}.2\n- item ${i}.3`,
      `> A quote of section ${i}.`,
      `\`\`\`ts\nconst section${i} = ${i};\n\`\`\``,
      `| key | value |\n| --- | --- |\n| k${i} | v${i} |`,
    ].join('\n\n');
    sections.push(section);
    length += section.length + 2;
  }
  return sections.join('\n\n');
}

/** Characters of text: the Add request stays just under the 1 MiB body limit, the state just under 1 MiB. */
const TEXT_CHARS = 1_048_000;
const RUNS = 7;

/**
 * Approximately an item's size as DynamoDB bills it (names plus values, binary by byte length), whether the
 * middleware sees it marshalled or not: the one-letter type tags of the marshalled form add a byte per value.
 */
function size(value: unknown): number {
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return String(value).length;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + size(item), 0);
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).reduce((sum, [name, item]) => sum + Buffer.byteLength(name) + size(item), 0);
  return 1;
}

/**
 * The harness estimates transactional writes from the JSON of each item, which counts a binary attribute at several
 * bytes per byte. This meter counts them as DynamoDB does: 2 WCU per item per started KB (deletes and checks 2).
 */
class TransactionWriteMeter {
  units = 0;

  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand') {
          const items = (args.input as { TransactItems?: Array<{ Put?: { Item?: unknown } }> }).TransactItems ?? [];
          this.units += items.reduce(
            (sum, item) => sum + 2 * Math.max(1, Math.ceil(size(item.Put?.Item ?? {}) / 1024)),
            0,
          );
        }
        return next(args);
      },
      { step: 'initialize', name: 'benchCrdtTransactionWrites' },
    );
  }
}

/** Medians of `runs` calls of `request` (each must answer 200), write units as DynamoDB bills the transactions. */
function measured(
  bench: BenchStack,
  writes: TransactionWriteMeter,
  operation: string,
  runs: number,
  request: (i: number) => Promise<{ status: number; body: any }>,
): Promise<Row> {
  return measuredRuns(
    bench,
    operation,
    runs,
    async (i) => {
      const value = await request(i);
      if (value.status !== 200) throw new Error(`${operation} failed: ${JSON.stringify(value.body).slice(0, 500)}`);
    },
    { writeUnits: () => writes.units },
  );
}

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    // The handlers' client module, loaded after the stack set the environment (as the harness does).
    const { dynamodb } = await import('../shared/db/client');
    const writes = new TransactionWriteMeter();
    writes.attach(dynamodb);
    const { headers } = await bench.newApiKey();
    const ids = { organizationId: 'bench-crdt-org', documentId: 'doc' };
    const text = randomBytes(TEXT_CHARS).toString('base64').slice(0, TEXT_CHARS);
    const post = (path: string, data: Record<string, unknown>) => bench.post(path, { ...ids, ...data }, headers);
    // Warm-up: the first request of each path loads its handler.
    await post('/v2/crdt/add', { editorId: 'warm', type: 'text', data: 'x' });
    await post('/v2/crdt/get', { editorId: 'warm' });
    await post('/v2/crdt/update', { editorId: 'warm', type: 'text', data: 'y' });

    const rows: Row[] = [];
    rows.push(
      await measured(bench, writes, 'add (new editor, ~1 MiB text)', 3, (i) =>
        post('/v2/crdt/add', { editorId: `e${i}`, type: 'text', data: text }),
      ),
    );
    const state = (await post('/v2/crdt/get', { editorId: 'e0', format: 'yjs' })).body.result.data[0].state as string;
    const stateBytes = Buffer.from(state, 'base64').length;
    rows.push(
      await measured(bench, writes, 'get one editor, format json', RUNS, () =>
        post('/v2/crdt/get', { editorId: 'e0' }),
      ),
    );
    rows.push(
      await measured(bench, writes, 'get one editor, format yjs', RUNS, () =>
        post('/v2/crdt/get', { editorId: 'e0', format: 'yjs' }),
      ),
    );
    rows.push(
      await measured(bench, writes, 'get the document (3 editors + warm-up)', 3, () => post('/v2/crdt/get', {})),
    );
    rows.push(
      await measured(bench, writes, 'update: replace one character', 3, (i) =>
        post('/v2/crdt/update', {
          editorId: 'e1',
          type: 'text',
          data: `${String.fromCharCode(65 + i)}${text.slice(1)}`,
        }),
      ),
    );
    rows.push(
      await measured(bench, writes, 'update: merge a 10-character client update', 3, (i) => {
        const client = new Y.Doc();
        Y.applyUpdate(client, Buffer.from(state, 'base64'));
        const known = Y.encodeStateVector(client);
        client.getText('content').insert(0, `client-${i}: `);
        return post('/v2/crdt/update', {
          editorId: 'e2',
          yjsUpdate: Buffer.from(Y.encodeStateAsUpdate(client, known)).toString('base64'),
        });
      }),
    );

    // An xml editor whose Yjs state is ~1 MB (250 KB of Markdown) read as Markdown and HTML (decisions §15; issue 32 goal: export ≤ 500 ms).
    const markdown = sampleMarkdown(250_000);
    await post('/v2/crdt/add', { editorId: 'rich-warm', type: 'xml', format: 'markdown', content: '# warm' });
    await post('/v2/crdt/get', { editorId: 'rich-warm', format: 'html' });
    rows.push(
      await measured(bench, writes, `add xml from Markdown (${(markdown.length / 1e6).toFixed(2)} MB)`, 3, (i) =>
        post('/v2/crdt/add', { editorId: `rich${i}`, type: 'xml', format: 'markdown', content: markdown }),
      ),
    );
    const richState = (await post('/v2/crdt/get', { editorId: 'rich0', format: 'yjs' })).body.result.data[0]
      .state as string;
    const richBytes = Buffer.from(richState, 'base64').length;
    for (const format of ['markdown', 'html', 'prosemirror-json', 'text']) {
      rows.push(
        await measured(
          bench,
          writes,
          `get xml (Yjs state ${(richBytes / 1e6).toFixed(2)} MB), format ${format}`,
          RUNS,
          () => post('/v2/crdt/get', { editorId: 'rich0', format }),
        ),
      );
    }
    rows.push(
      await measured(bench, writes, 'update xml from Markdown, one paragraph changed', 3, (i) =>
        post('/v2/crdt/update', {
          editorId: 'rich1',
          format: 'markdown',
          content: markdown.replace('Paragraph 5 ', `Paragraph 5 (edit ${i}) `),
        }),
      ),
    );
    // The conversion alone, in this process, as the function runs it after reading the state.
    const { renderXml } = await import('../shared/domain/crdt/formats/index');
    const richStateBytes = Buffer.from(richState, 'base64');
    for (const format of ['markdown', 'html'] as const) {
      const samples = Array.from({ length: RUNS }, () => {
        const started = performance.now();
        renderXml(richStateBytes, 'content', format);
        return performance.now() - started;
      });
      rows.push({
        operation: `conversion alone (in process), ${format}`,
        ms: median(samples),
        read: 0,
        write: 0,
        calls: 0,
      });
    }

    console.log(
      `\nCRDT data, one editor with a Yjs state of ${stateBytes} bytes (${Math.ceil(stateBytes / (300 * 1024))} items); medians`,
    );
    console.log('Reads strongly consistent (1 RCU per 4 KB); transactional writes at 2 WCU per item per started KB.\n');
    console.log('| operation | latency ms | read capacity | write capacity | DynamoDB calls |');
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows)
      console.log(
        `| ${r.operation} | ${r.ms.toFixed(0)} | ${r.read.toFixed(1)} | ${r.write.toFixed(1)} | ${r.calls} |`,
      );
  } finally {
    await bench.stack.stop();
  }
}

/**
 * Issue 30 item 4: what a live edit costs in DynamoDB, its append and its share of compaction, on an editor of ~1 KB
 * and of ~1 MB. Edits are appended in this process the way the live message handler stores them (the delta and the
 * LOG item's update in one transaction; a fold with the document's lock check when the log is full), and the local stack's stream
 * reader runs compaction as in AWS. Only calls on the editor's partition and its document's lock are counted (the
 * webhook events consumer, which reads the same stream records, is not part of this figure).
 */
const LIVE_EDITS = 4_200;

/** Capacity of the calls that touch one of `partitions` (a key, an item or a key condition value names it). */
class PartitionMeter {
  read = 0;
  write = 0;
  calls = 0;
  partitions: string[] = [];

  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        const touches = this.partitions.some((pk) =>
          JSON.stringify(args.input).includes(JSON.stringify(pk).slice(1, -1)),
        );
        if (!touches || !/(Get|Query|Put|Update|Delete|Transact|Batch)/.test(command)) return next(args);
        (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        const consumed = (
          result.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }
        ).ConsumedCapacity;
        const reported = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
          (sum, c) => sum + (c.CapacityUnits ?? 0),
          0,
        );
        if (command === 'TransactWriteItemsCommand') this.write += transactionWriteUnits(args.input);
        else if (/^(Get|Query|BatchGet)/.test(command)) this.read += reported;
        else this.write += reported;
        this.calls += 1;
        return result;
      },
      { step: 'initialize', name: 'benchCrdtPartitionMeter' },
    );
  }
}

/** List prices, us-east-1 on-demand since 1 November 2024: $0.625 per million WRU, $0.125 per million RRU. */
const dollarsPer1000 = (read: number, write: number) => ((read * 0.125 + write * 0.625) / 1_000_000) * 1000;

export async function runLiveEdits(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { dynamodb } = await import('../shared/db/client');
    const crdt = await import('../shared/db/crdt');
    const locks = await import('../shared/domain/document-locks');
    const transact = await import('../shared/db/transact');
    const migration = await import('../shared/db/migration');
    const { editorState, mergeUpdate } = await import('../shared/domain/crdt/yjs-state');
    const meter = new PartitionMeter();
    meter.attach(dynamodb);
    const { apiKeyId, headers } = await bench.newApiKey();
    const rows: string[] = [];
    for (const [label, chars] of [
      ['~1 KB', 1_000],
      ['~1 MB', 1_000_000],
    ] as const) {
      const ref = {
        organizationId: 'bench-live-org',
        documentId: chars < 10_000 ? 'doc-small' : 'doc-large',
        editorId: 'body',
      };
      const text = randomBytes(chars).toString('base64').slice(0, chars);
      const added = await bench.post('/v2/crdt/add', { ...ref, type: 'text', data: text }, headers);
      if (added.status !== 200) throw new Error(`add failed: ${JSON.stringify(added.body).slice(0, 300)}`);
      const stored = await crdt.getEditor(apiKeyId, ref);
      if (stored === undefined) throw new Error('The editor was not stored.');
      const client = new Y.Doc();
      Y.applyUpdate(client, stored.state);
      const incarnation = stored.incarnation;
      const write = (items: Parameters<typeof locks.transactGuarded>[1]) =>
        locks.transactGuarded(apiKeyId, items, locks.documentsIn(ref.organizationId, [ref.documentId]));
      await bench.meter.quiet(1500);
      meter.partitions = [
        await partitionOf(apiKeyId, ref),
        migration.documentLockKey(apiKeyId, ref.organizationId, ref.documentId).pk,
      ];
      const before = { read: meter.read, write: meter.write, calls: meter.calls };
      const started = performance.now();
      let folds = 0;
      for (let i = 0; i < LIVE_EDITS; i += 1) {
        let update: Uint8Array | undefined;
        const capture = (change: Uint8Array) => (update = change);
        client.on('update', capture);
        client.getText('content').insert(client.getText('content').length, String.fromCharCode(97 + (i % 26)));
        client.off('update', capture);
        const change = { update: update as Uint8Array, lastUpdate: new Date().toISOString(), lastUpdatedBy: 'bench' };
        // As the live message handler's storeUpdate: append (its LOG item's condition is the migration check), or
        // fold with the document's lock check when the log is full.
        const appended = await crdt.appendEditorUpdate(apiKeyId, ref, incarnation, change, transact.transactWrite);
        if ((appended as unknown) === false) {
          folds += 1;
          await crdt.updateEditor(
            apiKeyId,
            ref,
            (current) => ({
              state: mergeUpdate(editorState(current), change.update, current.type, current.contentKey),
              delta: change.update,
              ...change,
            }),
            write,
          );
        }
      }
      const ms = performance.now() - started;
      // The stream reader's compaction of the last edits.
      await bench.meter.quiet(3000);
      const read = meter.read - before.read;
      const written = meter.write - before.write;
      const after = await crdt.getEditor(apiKeyId, ref);
      const content = Y.mergeUpdates([after!.state, ...after!.deltas.map((d) => d.update)]);
      const check = new Y.Doc();
      Y.applyUpdate(check, content);
      if (check.getText('content').toString() !== client.getText('content').toString())
        throw new Error("The stored content differs from the client's.");
      rows.push(
        `| ${label} (state ${stored.state.length} B) | ${LIVE_EDITS} | ${(read / LIVE_EDITS).toFixed(2)} | ${(written / LIVE_EDITS).toFixed(2)} | ${((meter.calls - before.calls) / LIVE_EDITS).toFixed(2)} | ${folds} | ${after!.deltas.length} | $${dollarsPer1000(read / LIVE_EDITS, written / LIVE_EDITS).toFixed(4)} | ${(ms / LIVE_EDITS).toFixed(1)} |`,
      );
    }
    console.log(
      '\nLive edits (one character each) appended as the live handler stores them, compacted by the stream reader; per edit',
    );
    console.log(
      'Reads as DynamoDB Local reports them; transactional writes at 2 WCU per item per started KB. Prices: $0.125/M RRU, $0.625/M WRU.\n',
    );
    console.log(
      '| editor | edits | RCU per edit | WCU per edit | calls per edit | folds by the appender (log full) | deltas left | $ per 1,000 edits | ms per append |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of rows) console.log(row);
  } finally {
    await bench.stack.stop();
  }
}

/** The editor's CRDT partition (shared/db/crdt.ts; document ids here need no encoding). */
async function partitionOf(
  apiKeyId: string,
  ref: { organizationId: string; documentId: string; editorId: string },
): Promise<string> {
  const { organizationPartition } = await import('../shared/db/organization');
  return `${organizationPartition(apiKeyId, ref.organizationId)}#CRDT#${ref.documentId}`;
}
