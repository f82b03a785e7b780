/**
 * CRDT data: Get of an editor whose Yjs state is ~1 MiB (four parts of 300 KB), as JSON and as a Yjs state, and the
 * writes around it — latency over HTTP on the local stack and DynamoDB capacity per call.
 */
import { randomBytes } from 'node:crypto';
import * as Y from 'yjs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { median, startBenchStack, type BenchStack } from './harness';

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
  if (typeof value === 'object' && value !== null) return Object.entries(value).reduce((sum, [name, item]) => sum + Buffer.byteLength(name) + size(item), 0);
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
          this.units += items.reduce((sum, item) => sum + 2 * Math.max(1, Math.ceil(size(item.Put?.Item ?? {}) / 1024)), 0);
        }
        return next(args);
      },
      { step: 'initialize', name: 'benchCrdtTransactionWrites' },
    );
  }
}

interface Row {
  operation: string;
  ms: number;
  read: number;
  write: number;
  calls: number;
}

async function measured(
  bench: BenchStack,
  writes: TransactionWriteMeter,
  operation: string,
  runs: number,
  request: (i: number) => Promise<{ status: number; body: any }>,
): Promise<Row> {
  const samples: Row[] = [];
  for (let i = 0; i < runs; i += 1) {
    const unitsBefore = writes.units;
    const { value, ms, capacity } = await bench.meter.measure(() => request(i));
    if (value.status !== 200) throw new Error(`${operation} failed: ${JSON.stringify(value.body).slice(0, 500)}`);
    samples.push({ operation, ms, read: capacity.read, write: writes.units - unitsBefore, calls: capacity.calls });
  }
  return {
    operation,
    ms: median(samples.map((s) => s.ms)),
    read: median(samples.map((s) => s.read)),
    write: median(samples.map((s) => s.write)),
    calls: median(samples.map((s) => s.calls)),
  };
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
    rows.push(await measured(bench, writes, 'add (new editor, ~1 MiB text)', 3, (i) => post('/v2/crdt/add', { editorId: `e${i}`, type: 'text', data: text })));
    const state = (await post('/v2/crdt/get', { editorId: 'e0', format: 'yjs' })).body.result.data[0].state as string;
    const stateBytes = Buffer.from(state, 'base64').length;
    rows.push(await measured(bench, writes, 'get one editor, format json', RUNS, () => post('/v2/crdt/get', { editorId: 'e0' })));
    rows.push(await measured(bench, writes, 'get one editor, format yjs', RUNS, () => post('/v2/crdt/get', { editorId: 'e0', format: 'yjs' })));
    rows.push(await measured(bench, writes, 'get the document (3 editors + warm-up)', 3, () => post('/v2/crdt/get', {})));
    rows.push(await measured(bench, writes, 'update: replace one character', 3, (i) =>
      post('/v2/crdt/update', { editorId: 'e1', type: 'text', data: `${String.fromCharCode(65 + i)}${text.slice(1)}` }),
    ));
    rows.push(await measured(bench, writes, 'update: merge a 10-character client update', 3, (i) => {
      const client = new Y.Doc();
      Y.applyUpdate(client, Buffer.from(state, 'base64'));
      const known = Y.encodeStateVector(client);
      client.getText('content').insert(0, `client-${i}: `);
      return post('/v2/crdt/update', { editorId: 'e2', yjsUpdate: Buffer.from(Y.encodeStateAsUpdate(client, known)).toString('base64') });
    }));

    console.log(`\nCRDT data, one editor with a Yjs state of ${stateBytes} bytes (${Math.ceil(stateBytes / (300 * 1024))} items); medians`);
    console.log('Reads strongly consistent (1 RCU per 4 KB); transactional writes at 2 WCU per item per started KB.\n');
    console.log('| operation | latency ms | read capacity | write capacity | DynamoDB calls |');
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows) console.log(`| ${r.operation} | ${r.ms.toFixed(0)} | ${r.read.toFixed(1)} | ${r.write.toFixed(1)} | ${r.calls} |`);
  } finally {
    await bench.stack.stop();
  }
}
