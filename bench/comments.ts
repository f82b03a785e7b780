/**
 * Comments (issue 33 item 5, decisions §16) over HTTP on the local stack, with DynamoDB capacity per call:
 * - get of 100 threads anchored in one xml editor whose Yjs state is ~1 MB (goal ≤ 300 ms local; read units within
 *   1.5× the floor of the items the answer is made of: the editor's items and the threads' items, by their sizes);
 * - add of a thread whose comment tags 3 users (write units itemized per item written);
 * - count for 30 documents (goal ≤ 30 read units).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { sampleMarkdown } from './crdt';
import type { StoredAnchor } from '../shared/domain/comments/anchors';
import { measuredRuns, medianMs, startBenchStack, type BenchStack } from './harness';

const RUNS = 5;
const THREADS = 100;
const COUNT_DOCUMENTS = 30;
const THREADS_PER_COUNTED_DOCUMENT = 10;

const TYPES = new Set(['S', 'N', 'B', 'BOOL', 'NULL', 'M', 'L', 'SS', 'NS', 'BS']);

/**
 * A value's size as DynamoDB counts it (numbers about half their digits), given as an AttributeValue or as the
 * plain value the document client passes (this middleware may see either form).
 */
function valueBytes(value: unknown): number {
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array) && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length === 1 && TYPES.has(entries[0][0]) && !(value instanceof Set)) {
      const [type, inner] = entries[0];
      if (type === 'N') return Math.ceil(String(inner).replace(/^-/, '').length / 2) + 1;
      if (type === 'BOOL' || type === 'NULL') return 1;
      if (type === 'M') return 3 + itemBytes(inner as Record<string, unknown>);
      if (type === 'L') return 3 + (inner as unknown[]).reduce<number>((sum, e) => sum + 1 + valueBytes(e), 0);
      if (type === 'SS' || type === 'NS' || type === 'BS')
        return (inner as unknown[]).reduce<number>((sum, e) => sum + valueBytes(e), 0);
      return valueBytes(inner);
    }
  }
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).length / 2) + 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce<number>((sum, e) => sum + valueBytes(e), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, e) => sum + 1 + valueBytes(e), 0);
  if (value !== null && typeof value === 'object') return 3 + itemBytes(value as Record<string, unknown>);
  return 1;
}
const itemBytes = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);

/** A key with its ids left out: the tags that say which kind of item it is (`T#…#ORG#…#CA#…`). */
const shape = (key: unknown) =>
  typeof key === 'string'
    ? key
        .split('#')
        .map((part) => (/^[A-Z]{1,12}$/.test(part) ? part : '…'))
        .join('#')
        .replace(/(…#)+…/g, '…')
    : '?';
const keyString = (value: unknown) => (typeof value === 'string' ? value : (value as { S?: string } | undefined)?.S);

interface ReadCall {
  command: string;
  index?: string;
  consistent: boolean;
  pk: string;
  units: number;
  bytes: number;
  items: number;
}
interface WrittenItem {
  command: string;
  action: string;
  pk: string;
  sk: string;
  units: number;
}

/**
 * Records every read (what it returned, and its cost) and every item written, on the handlers' DynamoDB client.
 * Transactions are counted as DynamoDB bills them (2 units per KB of each Put, 2 per other action).
 */
function recorder(client: DynamoDBClient) {
  const reads: ReadCall[] = [];
  const writes: WrittenItem[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      const input = args.input as Record<string, any>;
      if (!/Query|GetItem|Put|Update|Delete|BatchWrite|TransactWrite/.test(command)) return next(args);
      const result = await next(args);
      try {
        note(command, input, result.output as Record<string, any>);
      } catch (error) {
        console.error(`the bench's recorder failed on ${command}:`, error);
      }
      return result;
    },
    // After the document client's marshalling (its own initialize middleware): AttributeValues in and out. The
    // capacity meter asked every call for its ConsumedCapacity.
    { step: 'build', name: 'commentsBenchRecorder' },
  );
  function note(command: string, input: Record<string, any>, output: Record<string, any>) {
    const consumed = [output.ConsumedCapacity ?? []]
      .flat()
      .reduce((sum: number, c: { CapacityUnits?: number }) => sum + (c.CapacityUnits ?? 0), 0);
    if (command === 'QueryCommand' || command === 'GetItemCommand' || command === 'BatchGetItemCommand') {
      const items: Array<Record<string, unknown>> =
        output.Items ??
        (output.Item
          ? [output.Item]
          : (Object.values(output.Responses ?? {}).flat() as Array<Record<string, unknown>>));
      const pk =
        keyString(input.ExpressionAttributeValues?.[':pk']) ??
        keyString(Object.values(input.ExpressionAttributeValues ?? {})[0]) ??
        keyString(input.Key?.pk) ??
        keyString((Object.values(input.RequestItems ?? {})[0] as { Keys?: Array<{ pk?: unknown }> })?.Keys?.[0]?.pk) ??
        '';
      reads.push({
        command,
        index: input.IndexName,
        consistent: input.ConsistentRead === true,
        pk,
        units: consumed,
        bytes: items.reduce((sum, item) => sum + itemBytes(item), 0),
        items: items.length,
      });
    } else if (command === 'TransactWriteItemsCommand') {
      for (const entry of input.TransactItems as Array<Record<string, any>>) {
        const [action, body] = Object.entries(entry)[0];
        const key = body.Item ?? body.Key;
        const units = action === 'Put' ? 2 * Math.max(1, Math.ceil(itemBytes(body.Item) / 1024)) : 2;
        writes.push({ command: 'transaction', action, pk: keyString(key.pk)!, sk: keyString(key.sk)!, units });
      }
    } else if (command === 'BatchWriteItemCommand') {
      for (const requests of Object.values(input.RequestItems as Record<string, Array<Record<string, any>>>))
        for (const request of requests) {
          const put = request.PutRequest?.Item;
          const key = put ?? request.DeleteRequest?.Key;
          const units = put ? Math.max(1, Math.ceil(itemBytes(put) / 1024)) : 1;
          writes.push({
            command: 'batch',
            action: put ? 'Put' : 'Delete',
            pk: keyString(key.pk)!,
            sk: keyString(key.sk)!,
            units,
          });
        }
    } else {
      const key = input.Item ?? input.Key;
      writes.push({
        command: command.replace(/ItemCommand$/, ''),
        action: command.replace(/ItemCommand$/, ''),
        pk: keyString(key?.pk) ?? '',
        sk: keyString(key?.sk) ?? '',
        units: consumed,
      });
    }
  }
  return {
    reads,
    writes,
    clear() {
      reads.length = 0;
      writes.length = 0;
    },
  };
}

/** What a call returned, or throws with its body. */
async function ok(answer: Promise<{ status: number; body: any }>, what: string) {
  const { status, body } = await answer;
  if (status !== 200) throw new Error(`${what} failed (${status}): ${JSON.stringify(body).slice(0, 500)}`);
  return body.result;
}

/** Medians of RUNS calls of `request`, each after the stack's background writes settled (and `prepare`). */
const timedRuns = (bench: BenchStack, request: () => Promise<unknown>, prepare?: () => unknown) =>
  measuredRuns(bench, '', RUNS, request, { prepare, quietMs: 300 });

/**
 * The steps of the anchored get, each timed alone in this process (the handlers' modules, DynamoDB Local): where a
 * get's time goes, on a machine whose load moves the end-to-end figures.
 */
async function inProcessBreakdown(apiKeyId: string, organizationId: string, documentId: string) {
  const { readListedThreads, readStream, readThread, readThreads, streamPartition } =
    await import('../shared/db/comment-annotation');
  const { getEditor } = await import('../shared/db/crdt');
  const { editorAnchorDoc, resolveAnchors } = await import('../shared/domain/comments/anchors');
  const { decodedEditor, forgetDecodedEditors } = await import('../shared/domain/comments/decoded-editors');
  const { presentThread } = await import('../shared/domain/comments/threads');
  const { listAnnotations } = await import('../shared/domain/comments/listing');
  const stream = streamPartition(apiKeyId, organizationId, documentId, 'document');
  const { entries } = await readStream(stream, { limit: THREADS });
  const threads = [...(await readListedThreads(apiKeyId, organizationId, entries)).values()];
  const editor = (await getEditor(apiKeyId, { organizationId, documentId, editorId: 'body' }))!;
  const doc = editorAnchorDoc(editor);
  const anchors = threads.map((thread) => thread.head.anchor as unknown as StoredAnchor);
  const list = (forget: boolean) => () => {
    if (forget) forgetDecodedEditors();
    return listAnnotations(apiKeyId, { organizationId, documentId, pageSize: THREADS });
  };
  const steps: Array<[string, () => unknown]> = [
    [
      "listing: one Query of the page's entries (gsi1: the threads' heads)",
      () => readStream(stream, { limit: THREADS }),
    ],
    [
      `threads: the ${THREADS} threads' comments by key (BatchGetItem, 100 keys a call)`,
      () => readListedThreads(apiKeyId, organizationId, entries),
    ],
    [
      '(a thread read by Query instead: head and comments, one thread)',
      () => readThread(apiKeyId, organizationId, entries[0].annotationId),
    ],
    [
      `(the same threads by Query instead: ${THREADS} Queries at once)`,
      () =>
        readThreads(
          apiKeyId,
          organizationId,
          entries.map((e) => e.annotationId),
        ),
    ],
    [
      'editor: one strongly consistent Query (head, 4 parts)',
      () => getEditor(apiKeyId, { organizationId, documentId, editorId: 'body' }),
    ],
    ['decode the state into a Y.Doc', () => editorAnchorDoc(editor)],
    ['a kept decoded state: hash the state read and reuse the doc', () => decodedEditor(apiKeyId, editor)],
    [`walk the content for the ${THREADS} anchors`, () => resolveAnchors(editor, doc, anchors)],
    [
      `present the ${THREADS} threads and measure their JSON`,
      () => threads.map((t) => JSON.stringify(presentThread(t))),
    ],
    ['**the whole get in process, editor unchanged (decoded state kept)**', list(false)],
    ['**the whole get in process, state decoded**', list(true)],
  ];
  console.log(`\nWhere the anchored get's time goes: each step alone, in process; medians of ${RUNS}\n`);
  console.log('| step | ms |');
  console.log('|---|---:|');
  for (const [name, action] of steps) console.log(`| ${name} | ${(await medianMs(RUNS, action)).toFixed(0)} |`);
}

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { dynamodb } = await import('../shared/db/client');
    const record = recorder(dynamodb);
    const { headers, apiKeyId } = await bench.newApiKey();
    await bench.enableActivityLogs(headers);
    const organizationId = 'bench-comments-org';
    const scope = { organizationId, documentId: 'doc' };
    const post = (path: string, data: Record<string, unknown>) => bench.post(path, data, headers);

    // The editor: ~1 MB of Yjs state from Markdown (headings, marks, links, lists, quotes, code, tables).
    await ok(
      post('/v2/crdt/add', {
        ...scope,
        editorId: 'body',
        type: 'xml',
        format: 'markdown',
        content: sampleMarkdown(265_000),
        createOrganization: true,
        createDocument: true,
      }),
      'crdt add',
    );
    const state = (await ok(post('/v2/crdt/get', { ...scope, editorId: 'body', format: 'yjs' }), 'crdt get')).data[0]
      .state as string;
    const stateBytes = Buffer.from(state, 'base64').length;
    const text = (await ok(post('/v2/crdt/get', { ...scope, editorId: 'body', format: 'text' }), 'text')).data[0]
      .data as string;

    // 100 threads, each anchored over 40 characters spread over the document, each with a comment and a reply.
    for (let batch = 0; batch < THREADS / 50; batch += 1) {
      const added = await ok(
        post('/v2/commentannotations/add', {
          ...scope,
          commentAnnotations: Array.from({ length: 50 }, (_, i) => {
            const n = batch * 50 + i;
            return {
              annotationId: `t${n}`,
              anchor: { editorId: 'body', index: Math.floor((text.length / THREADS) * n), length: 40 },
              commentData: [
                { commentText: `Is this right? (${n})`, from: { userId: 'ann', name: 'Ann' } },
                { commentText: 'Yes, checked against the source.', from: { userId: 'ben', name: 'Ben' } },
              ],
            };
          }),
        }),
        'add',
      );
      const failed = Object.values(added.data as Record<string, { success: boolean }>).filter((r) => !r.success);
      if (failed.length > 0) throw new Error(`threads not added: ${JSON.stringify(failed[0])}`);
    }

    // Get of 100 threads (warm-up first), with the reads itemized.
    const get = () => ok(post('/v2/commentannotations/get', { ...scope, pageSize: THREADS }), 'get');
    const page = await get();
    if (page.data.length !== THREADS) throw new Error(`get answered ${page.data.length} threads`);
    if (page.data.some((t: { anchor?: { orphaned: boolean } }) => t.anchor?.orphaned !== false))
      throw new Error('an anchor did not resolve');
    const { forgetDecodedEditors } = await import('../shared/domain/comments/decoded-editors');
    // The process's first gets after that one, each decoding the state: V8 has not yet optimized the code they run
    // (the SDK's, the decode's, the walk's), so they are slower than the same gets of a function that served a few
    // requests (measured first, so they are also the warm-up of the rows below).
    const firstRow = await timedRuns(bench, get, forgetDecodedEditors);
    const getRow = await timedRuns(bench, get);
    // The same get with no decoded state kept (the first read after the editor changed, or in a new process).
    const coldRow = await timedRuns(bench, get, forgetDecodedEditors);
    // What the same get costs without anchors (100 threads of another document), and reading the editor alone.
    await ok(
      post('/v2/commentannotations/add', {
        organizationId,
        documentId: 'plain',
        createDocument: true,
        commentAnnotations: Array.from({ length: 50 }, (_, n) => ({
          annotationId: `p${n}`,
          commentData: [
            { commentText: `Is this right? (${n})`, from: { userId: 'ann', name: 'Ann' } },
            { commentText: 'Yes, checked against the source.', from: { userId: 'ben', name: 'Ben' } },
          ],
        })),
      }),
      'add plain',
    );
    await ok(
      post('/v2/commentannotations/add', {
        organizationId,
        documentId: 'plain',
        commentAnnotations: Array.from({ length: 50 }, (_, n) => ({
          annotationId: `p${50 + n}`,
          commentData: [
            { commentText: `Is this right? (${50 + n})`, from: { userId: 'ann', name: 'Ann' } },
            { commentText: 'Yes, checked against the source.', from: { userId: 'ben', name: 'Ben' } },
          ],
        })),
      }),
      'add plain',
    );
    const plainRow = await timedRuns(bench, () =>
      ok(post('/v2/commentannotations/get', { organizationId, documentId: 'plain', pageSize: THREADS }), 'get plain'),
    );
    const editorRow0 = await timedRuns(bench, () =>
      ok(post('/v2/crdt/get', { ...scope, editorId: 'body', format: 'text' }), 'crdt get text'),
    );
    await bench.meter.quiet(300);
    record.clear();
    await get();
    const reads = [...record.reads];
    const kind = (read: ReadCall) =>
      read.pk.includes('#CRDT#')
        ? 'editor'
        : read.index !== undefined
          ? `listing (${read.index}: the threads' heads)`
          : read.pk.includes('#CA#')
            ? read.command === 'BatchGetItemCommand'
              ? "threads' comments (BatchGetItem, by key)"
              : 'threads (Query: head and comments)'
            : `other (${shape(read.pk)})`;
    const byKind = new Map<string, { calls: number; units: number; bytes: number; floor: number }>();
    for (const read of reads) {
      const row = byKind.get(kind(read)) ?? { calls: 0, units: 0, bytes: 0, floor: 0 };
      row.calls += 1;
      row.units += read.units;
      row.bytes += read.bytes;
      row.floor += (read.bytes / 4096) * (read.consistent ? 1 : 0.5);
      byKind.set(kind(read), row);
    }
    // The floor: the items the answer is made of, by size, at the consistency each is read with: the editor's, and
    // the threads' heads (the listing's entries: a head is its own index entry) and comments, however they are read.
    const floored = (name: string) => name === 'editor' || name.startsWith('listing') || name.startsWith('threads');
    const floor = [...byKind].reduce((sum, [name, row]) => sum + (floored(name) ? row.floor : 0), 0);
    const units = [...byKind.values()].reduce((sum, row) => sum + row.units, 0);

    console.log(
      `\nGet of ${THREADS} threads anchored in one xml editor (Yjs state ${stateBytes.toLocaleString('en')} bytes, ${text.length.toLocaleString('en')} characters of text); medians of ${RUNS}\n`,
    );
    console.log('| operation | latency ms | read units | DynamoDB calls |');
    console.log('|---|---:|---:|---:|');
    for (const [name, row] of [
      [`**get, pageSize ${THREADS}, every thread anchored**, editor unchanged since the last read`, getRow],
      [`**get, pageSize ${THREADS}, every thread anchored**, editor's state decoded (changed since)`, coldRow],
      [
        `get, pageSize ${THREADS}, every thread anchored, state decoded: the process's ${RUNS} first gets (code not yet optimized by V8)`,
        firstRow,
      ],
      [`get, pageSize ${THREADS}, no anchors (another document)`, plainRow],
      ['crdt get of the editor, format text (read and decode the state, render its text)', editorRow0],
    ] as const)
      console.log(`| ${name} | ${row.ms.toFixed(0)} | ${row.read.toFixed(1)} | ${row.calls} |`);
    console.log(
      '\nIts reads (one run), and the floor: the items the answer is made of, by size, at the consistency read\n',
    );
    console.log('| read | calls | items KB | read units | floor (KB / 4, ½ if eventually consistent) |');
    console.log('|---|---:|---:|---:|---:|');
    for (const [name, row] of byKind)
      console.log(
        `| ${name} | ${row.calls} | ${(row.bytes / 1024).toFixed(1)} | ${row.units.toFixed(1)} | ${floored(name) ? row.floor.toFixed(1) : '–'} |`,
      );
    console.log(
      `| **total** | ${reads.length} | | **${units.toFixed(1)}** | **${floor.toFixed(1)}** (×1.5 = ${(1.5 * floor).toFixed(1)}) |`,
    );
    console.log(
      `\nRead units ${(units / floor).toFixed(2)}× the floor (goal ≤ 1.5×: ${units <= 1.5 * floor ? 'met' : 'not met'}); latency goal ≤ 300 ms: ${getRow.ms <= 300 ? 'met' : 'not met'} (editor unchanged), ${coldRow.ms <= 300 ? 'met' : 'not met'} (state decoded).`,
    );

    await inProcessBreakdown(apiKeyId, organizationId, scope.documentId);

    // Add of one thread whose comment tags 3 users (activity logs on: records, notifications, mention entries).
    await bench.meter.quiet(500);
    let next = 0;
    const addMentions = () =>
      ok(
        post('/v2/commentannotations/add', {
          ...scope,
          commentAnnotations: [
            {
              annotationId: `m${next++}`,
              anchor: { editorId: 'body', index: 100, length: 40 },
              commentData: [
                {
                  commentText: '@Ben @Cleo @Dan please review.',
                  from: { userId: 'ann', name: 'Ann' },
                  taggedUserContacts: ['ben', 'cleo', 'dan'].map((userId) => ({ userId })),
                },
              ],
            },
          ],
        }),
        'add with mentions',
      );
    await addMentions();
    const addRow = await timedRuns(bench, addMentions);
    await bench.meter.quiet(1000);
    record.clear();
    await addMentions();
    const requestWrites = [...record.writes];
    const requestReads = record.reads.reduce((sum, read) => sum + read.units, 0);
    await bench.meter.quiet(1000);
    const laterWrites = record.writes.slice(requestWrites.length);
    console.log(`\nAdd of one anchored thread whose comment tags 3 users (activity logs on); medians of ${RUNS}\n`);
    console.log('| operation | latency ms | read units | write units | DynamoDB calls |');
    console.log('|---|---:|---:|---:|---:|');
    console.log(
      `| add, 1 thread, 3 mentions | ${addRow.ms.toFixed(0)} | ${addRow.read.toFixed(1)} | ${addRow.write.toFixed(1)} | ${addRow.calls} |`,
    );
    console.log(`\nItems written by one such request (read units of it: ${requestReads.toFixed(1)}):\n`);
    console.log('| call | action | partition | sort key | write units |');
    console.log('|---|---|---|---|---:|');
    for (const item of requestWrites)
      console.log(
        `| ${item.command} | ${item.action} | \`${shape(item.pk)}\` | \`${shape(item.sk)}\` | ${item.units} |`,
      );
    const total = (items: WrittenItem[]) => items.reduce((sum, item) => sum + item.units, 0);
    console.log(`| **total** | | | | **${total(requestWrites)}** |`);
    if (laterWrites.length > 0) {
      console.log('\nWritten after the answer by the stream workers it woke (events, webhooks):\n');
      console.log('| call | action | partition | sort key | write units |');
      console.log('|---|---|---|---|---:|');
      for (const item of laterWrites)
        console.log(
          `| ${item.command} | ${item.action} | \`${shape(item.pk)}\` | \`${shape(item.sk)}\` | ${item.units} |`,
        );
      console.log(`| **total** | | | | **${total(laterWrites)}** |`);
    }

    // Count for 30 documents of 10 threads each, with and without a user's unread count.
    const documentIds = Array.from({ length: COUNT_DOCUMENTS }, (_, i) => `counted-${i}`);
    for (const documentId of documentIds)
      await ok(
        post('/v2/commentannotations/add', {
          organizationId,
          documentId,
          createDocument: true,
          commentAnnotations: Array.from({ length: THREADS_PER_COUNTED_DOCUMENT }, (_, i) => ({
            annotationId: `${documentId}-${i}`,
            commentData: [{ commentText: 'A note.', from: { userId: i % 2 === 0 ? 'ann' : 'ben' } }],
          })),
        }),
        'add counted',
      );
    await ok(
      post('/v2/commentannotations/read', {
        organizationId,
        documentId: documentIds[0],
        annotationIds: [`${documentIds[0]}-1`],
        userId: 'ann',
      }),
      'read',
    );
    const count = (userId?: string) =>
      ok(post('/v2/commentannotations/count', { organizationId, documentIds, ...(userId ? { userId } : {}) }), 'count');
    await count('ann');
    await bench.meter.quiet(300);
    record.clear();
    await count('ann');
    const countReads = [...record.reads];
    const countRow = await timedRuns(bench, () => count());
    const unreadRow = await timedRuns(bench, () => count('ann'));
    console.log(
      `\nCount for ${COUNT_DOCUMENTS} documents of ${THREADS_PER_COUNTED_DOCUMENT} threads; medians of ${RUNS} (goal ≤ 30 read units)\n`,
    );
    console.log('| operation | latency ms | read units | DynamoDB calls | goal |');
    console.log('|---|---:|---:|---:|---|');
    for (const [name, row] of [
      ['count (total)', countRow],
      ['count with userId (total, unread)', unreadRow],
    ] as const)
      console.log(
        `| ${name} | ${row.ms.toFixed(0)} | ${row.read.toFixed(1)} | ${row.calls} | ${row.read <= 30 ? 'met' : 'not met'} |`,
      );
    console.log('\nThe reads of one count with userId:\n');
    console.log('| read | calls | items | items KB | read units |');
    console.log('|---|---:|---:|---:|---:|');
    const countKinds = new Map<string, { calls: number; items: number; bytes: number; units: number }>();
    for (const read of countReads) {
      const name = `${read.index ?? 'table'} \`${shape(read.pk)}\`${read.consistent ? ' (consistent)' : ''}`;
      const row = countKinds.get(name) ?? { calls: 0, items: 0, bytes: 0, units: 0 };
      row.calls += 1;
      row.items += read.items;
      row.bytes += read.bytes;
      row.units += read.units;
      countKinds.set(name, row);
    }
    for (const [name, row] of countKinds)
      console.log(
        `| ${name} | ${row.calls} | ${row.items} | ${(row.bytes / 1024).toFixed(1)} | ${row.units.toFixed(1)} |`,
      );
  } finally {
    await bench.stack.stop();
  }
}
