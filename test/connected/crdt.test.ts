import { randomBytes, randomUUID } from 'node:crypto';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import * as Y from 'yjs';
import { handler as addCrdt } from '../../functions/crdt/add';
import { handler as getCrdt } from '../../functions/crdt/get';
import { handler as updateCrdt } from '../../functions/crdt/update';
import { TABLE_NAME, db } from '../../shared/db/client';
import { PART_BYTES, createEditor } from '../../shared/db/crdt';
import { getDocument } from '../../shared/db/organization';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint } from '../support/invoke';
import { uniqueId } from '../support/ids';

type Headers = Record<string, string>;
const add = endpoint(addCrdt, '/v2/crdt/add');
const get = endpoint(getCrdt, '/v2/crdt/get');
const update = endpoint(updateCrdt, '/v2/crdt/update');

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
/** A client editor that loaded a state returned by Get with `format: 'yjs'`. */
function clientDoc(state: string): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, Buffer.from(state, 'base64'));
  return doc;
}

/** Every stored item of an editor, whatever its key (tests only: requests never scan), its LOG counters left out. */
async function storedItems(editorId: string): Promise<Array<Record<string, unknown>>> {
  return (await allItems(editorId)).filter((item) => !String(item.sk).endsWith('#LOG'));
}

/** Every stored item of an editor, its LOG counters included. */
async function allItems(editorId: string): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: TABLE_NAME,
        FilterExpression: 'editorId = :e',
        ExpressionAttributeValues: { ':e': editorId },
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

async function tableSize(): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: TABLE_NAME, Select: 'COUNT', ExclusiveStartKey: start }));
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/** Text of `length` characters, not compressible, with multi-byte characters in it. */
const bigText = (length: number) =>
  randomBytes(length)
    .toString('base64')
    .slice(0, length - 2) + 'éß';

describe('CRDT data', () => {
  let tenant: Tenant;
  let h: Headers;
  let organizationId: string;
  let documentId: string;

  beforeAll(async () => {
    tenant = await newTenant();
    h = tenant.apiKeyHeaders;
  });

  beforeEach(() => {
    organizationId = uniqueId('org');
    documentId = uniqueId('doc');
  });

  const ids = () => ({ organizationId, documentId });

  describe('add and get', () => {
    it('stores text and returns the documented record', async () => {
      const before = Date.now();

      const added = await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'Hello', userId: 'u1' });
      const read = await get(h, { ...ids(), editorId: 'e1' });

      expect(added.statusCode).toBe(200);
      expect(added.body.result).toEqual({ status: 'success', message: 'CRDT data added successfully.' });
      expect(read.body.result?.data).toEqual([
        { data: 'Hello', id: 'e1', lastUpdate: expect.any(String), lastUpdatedBy: 'u1', sessionId: null },
      ]);
      const lastUpdate = read.body.result?.data[0].lastUpdate as string;
      expect(new Date(lastUpdate).toISOString()).toBe(lastUpdate);
      expect(Date.parse(lastUpdate)).toBeGreaterThanOrEqual(before - 1000);
    });

    it('stores a nested map, an array of mixed values and XML, and reads each back as its plain value', async () => {
      const map = { title: 'Doc', meta: { tags: ['a', 'b'], owner: { id: 7 } }, draft: true, none: null };
      const array = [1, 'two', { three: [3] }, null, false];
      const xml = '<paragraph id="p1">Hi <bold class="b">there</bold></paragraph><paragraph></paragraph>';

      await add(h, { ...ids(), editorId: 'map', type: 'map', data: map });
      await add(h, { ...ids(), editorId: 'array', type: 'array', data: array });
      await add(h, { ...ids(), editorId: 'xml', type: 'xml', data: xml, contentKey: 'default' });
      const read = await get(h, ids());

      const byId = Object.fromEntries(
        (read.body.result?.data as Array<{ id: string; data: unknown }>).map((r) => [r.id, r.data]),
      );
      expect(byId).toEqual({ map, array, xml });
      expect(read.body.result?.data[0].lastUpdatedBy).toBeNull();
    });

    it('returns every editor of the document without editorId, and none of another document', async () => {
      await add(h, { ...ids(), editorId: 'b', type: 'text', data: 'B' });
      await add(h, { ...ids(), editorId: 'a', type: 'text', data: 'A' });
      await add(h, { organizationId, documentId: `${documentId}-other`, editorId: 'c', type: 'text', data: 'C' });

      const read = await get(h, ids());

      expect((read.body.result?.data as Array<{ id: string }>).map((r) => r.id)).toEqual(['a', 'b']);
    });

    it('returns an empty array for an unknown editor or a document without data', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'x' });

      const unknownEditor = await get(h, { ...ids(), editorId: 'nobody' });
      const emptyDocument = await get(h, { organizationId, documentId: 'empty' });

      expect(unknownEditor.statusCode).toBe(200);
      expect(unknownEditor.body.result?.data).toEqual([]);
      expect(emptyDocument.body.result?.data).toEqual([]);
    });

    it('with format yjs adds the base64 Yjs state, its type and content key, loadable by a Yjs editor', async () => {
      await add(h, { ...ids(), editorId: 'x', type: 'xml', data: '<p>one</p>', contentKey: 'default' });

      const read = await get(h, { ...ids(), editorId: 'x', format: 'yjs' });

      const record = read.body.result?.data[0];
      expect(record).toMatchObject({
        data: '<p>one</p>',
        id: 'x',
        type: 'xml',
        contentKey: 'default',
        state: expect.any(String),
      });
      expect(clientDoc(record.state).getXmlFragment('default').toString()).toBe('<p>one</p>');
      const json = await get(h, { ...ids(), editorId: 'x', format: 'json' });
      expect(Object.keys(json.body.result?.data[0]).sort()).toEqual([
        'data',
        'id',
        'lastUpdate',
        'lastUpdatedBy',
        'sessionId',
      ]);
    });

    it('creates the organization and document when they do not exist yet', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'x' });

      expect(await getDocument(tenant.apiKeyId, organizationId, documentId)).toMatchObject({
        documentId,
        accessType: 'organizationPrivate',
      });
    });

    it('answers ALREADY_EXISTS when the editor already has data, and keeps the first content', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'first' });

      const again = await add(h, { ...ids(), editorId: 'e1', type: 'map', data: { second: true } });

      expect(again.statusCode).toBe(409);
      expect(again.body.error?.status).toBe('ALREADY_EXISTS');
      expect((await get(h, { ...ids(), editorId: 'e1' })).body.result?.data[0].data).toBe('first');
    });
  });

  describe('input rules (nothing is written when they fail)', () => {
    const expectInvalid = async (response: Awaited<ReturnType<typeof add>>, message?: string) => {
      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      if (message !== undefined) expect(response.body.error?.message).toBe(message);
    };

    it('answers "Editor ID is required." when the editor id is missing or empty', async () => {
      const before = await tableSize();

      await expectInvalid(await add(h, { ...ids(), type: 'text', data: 'x' }), 'Editor ID is required.');
      await expectInvalid(await add(h, { ...ids(), editorId: '', type: 'text', data: 'x' }), 'Editor ID is required.');
      await expectInvalid(await update(h, { ...ids(), type: 'text', data: 'x' }), 'Editor ID is required.');

      expect(await tableSize()).toBe(before);
    });

    it.each([
      ['text', 5, 'Data must be a string for type text.'],
      ['map', ['not', 'an', 'object'], 'Data must be an object for type map.'],
      ['map', 'text', 'Data must be an object for type map.'],
      ['array', { not: 'an array' }, 'Data must be an array for type array.'],
      ['xml', { p: 'x' }, 'Data must be a string for type xml.'],
    ])('answers the exact message when %s data is %j', async (type, data, message) => {
      const before = await tableSize();

      await expectInvalid(await add(h, { ...ids(), editorId: 'e1', type, data }), message);

      expect(await tableSize()).toBe(before);
    });

    it('requires type and data, refuses an unknown type, invalid XML and a missing organization', async () => {
      const before = await tableSize();

      await expectInvalid(await add(h, { ...ids(), editorId: 'e1', data: 'x' }), 'Type is required.');
      await expectInvalid(await add(h, { ...ids(), editorId: 'e1', type: 'text' }), 'Data is required.');
      await expectInvalid(await add(h, { ...ids(), editorId: 'e1', type: 'yaml', data: 'x' }));
      await expectInvalid(await add(h, { ...ids(), editorId: 'e1', type: 'xml', data: '<p>unclosed' }));
      await expectInvalid(await add(h, { documentId, editorId: 'e1', type: 'text', data: 'x' }));
      await expectInvalid(await get(h, { documentId }));

      expect(await tableSize()).toBe(before);
      expect(await getDocument(tenant.apiKeyId, organizationId, documentId)).toBeUndefined();
    });
  });

  describe('update', () => {
    it('answers NOT_FOUND for an editor without data, and writes nothing', async () => {
      const before = await tableSize();

      const missing = await update(h, { ...ids(), editorId: 'ghost', type: 'text', data: 'x' });

      expect(missing.statusCode).toBe(404);
      expect(missing.body.error?.status).toBe('NOT_FOUND');
      expect(await tableSize()).toBe(before);
    });

    it('replaces the content, and a client that loaded the state before converges by applying the new state', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'The quick brown fox', userId: 'u1' });
      const loaded = clientDoc((await get(h, { ...ids(), editorId: 'e1', format: 'yjs' })).body.result?.data[0].state);

      const updated = await update(h, {
        ...ids(),
        editorId: 'e1',
        type: 'text',
        data: 'The quick red fox',
        userId: 'u2',
      });
      const read = await get(h, { ...ids(), editorId: 'e1', format: 'yjs' });
      Y.applyUpdate(loaded, Buffer.from(read.body.result?.data[0].state, 'base64'));

      expect(updated.body.result).toEqual({ status: 'success', message: 'CRDT data updated successfully.' });
      expect(read.body.result?.data[0]).toMatchObject({ data: 'The quick red fox', lastUpdatedBy: 'u2' });
      expect(loaded.getText('content').toString()).toBe('The quick red fox');
    });

    it('replaces map and XML content under the stored content key', async () => {
      await add(h, { ...ids(), editorId: 'm', type: 'map', data: { a: 1, b: { c: 2 } } });
      await add(h, { ...ids(), editorId: 'x', type: 'xml', data: '<p>a</p>', contentKey: 'default' });

      await update(h, { ...ids(), editorId: 'm', type: 'map', data: { b: { c: 3, d: [1] } } });
      await update(h, { ...ids(), editorId: 'x', type: 'xml', data: '<p>a</p><p>b</p>' });
      const read = await get(h, ids());

      expect(read.body.result?.data.map((r: { data: unknown }) => r.data)).toEqual([
        { b: { c: 3, d: [1] } },
        '<p>a</p><p>b</p>',
      ]);
    });

    it('refuses a type or content key other than the stored ones', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'x' });

      const otherType = await update(h, { ...ids(), editorId: 'e1', type: 'map', data: {} });
      const otherKey = await update(h, { ...ids(), editorId: 'e1', type: 'text', data: 'y', contentKey: 'other' });
      const wrongData = await update(h, { ...ids(), editorId: 'e1', type: 'text', data: ['y'] });

      expect(otherType.body.error).toEqual({
        status: 'INVALID_ARGUMENT',
        message: 'Type must be text, the type this editor was created with.',
      });
      expect(otherKey.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(wrongData.body.error?.message).toBe('Data must be a string for type text.');
      expect((await get(h, { ...ids(), editorId: 'e1' })).body.result?.data[0].data).toBe('x');
    });

    it('keeps the stored type and contentKey when an update sends data without type', async () => {
      await add(h, { ...ids(), editorId: 'k1', type: 'map', data: { a: 1 }, contentKey: 'body' });

      const updated = await update(h, { ...ids(), editorId: 'k1', data: { a: 2, b: 'x' } });
      const read = await get(h, { ...ids(), editorId: 'k1', format: 'yjs' });

      expect(updated.statusCode).toBe(200);
      expect(read.body.result?.data[0]).toMatchObject({ type: 'map', contentKey: 'body', data: { a: 2, b: 'x' } });
    });

    it('refuses data without type that does not match the stored type, saying which type the editor has', async () => {
      await add(h, { ...ids(), editorId: 'k2', type: 'text', data: 'x' });

      const wrongKind = await update(h, { ...ids(), editorId: 'k2', data: { a: 1 } });
      const neither = await update(h, { ...ids(), editorId: 'k2' });

      expect(wrongKind.body.error).toEqual({
        status: 'INVALID_ARGUMENT',
        message: 'Data must be a string: this editor was created with type text.',
      });
      expect(neither.body.error?.status).toBe('INVALID_ARGUMENT');
      expect((await get(h, { ...ids(), editorId: 'k2' })).body.result?.data[0].data).toBe('x');
    });

    it('merges a client’s Yjs update into the stored state', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'array', data: ['server'] });
      const client = clientDoc((await get(h, { ...ids(), editorId: 'e1', format: 'yjs' })).body.result?.data[0].state);
      const known = Y.encodeStateVector(client);
      client.getArray('content').push([{ from: 'client' }]);

      const merged = await update(h, {
        ...ids(),
        editorId: 'e1',
        yjsUpdate: base64(Y.encodeStateAsUpdate(client, known)),
        userId: 'c1',
      });
      const read = await get(h, { ...ids(), editorId: 'e1' });

      expect(merged.statusCode).toBe(200);
      expect(read.body.result?.data[0]).toMatchObject({ data: ['server', { from: 'client' }], lastUpdatedBy: 'c1' });
    });

    it('refuses a yjsUpdate that is not base64 or not a Yjs update, or comes with data', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'x' });
      const valid = base64(Y.encodeStateAsUpdate(new Y.Doc()));

      const notBase64 = await update(h, { ...ids(), editorId: 'e1', yjsUpdate: 'not base64!' });
      const notYjs = await update(h, {
        ...ids(),
        editorId: 'e1',
        yjsUpdate: base64(new Uint8Array([1, 200, 3, 4, 5])),
      });
      const both = await update(h, { ...ids(), editorId: 'e1', yjsUpdate: valid, type: 'text', data: 'y' });

      expect(notBase64.body.error).toEqual({
        status: 'INVALID_ARGUMENT',
        message: 'yjsUpdate must be a base64-encoded Yjs update.',
      });
      expect(notYjs.body.error).toEqual({
        status: 'INVALID_ARGUMENT',
        message: 'yjsUpdate is not a valid Yjs update.',
      });
      expect(both.body.error?.status).toBe('INVALID_ARGUMENT');
      expect((await get(h, { ...ids(), editorId: 'e1' })).body.result?.data[0].data).toBe('x');
    });

    it('loses no update when clients merge concurrently', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'map', data: {} });
      const state = (await get(h, { ...ids(), editorId: 'e1', format: 'yjs' })).body.result?.data[0].state as string;
      const updates = Array.from({ length: 8 }, (_, i) => {
        const client = clientDoc(state);
        client.getMap('content').set(`client-${i}`, i);
        return base64(Y.encodeStateAsUpdate(client));
      });

      const results = await Promise.all(updates.map((yjsUpdate) => update(h, { ...ids(), editorId: 'e1', yjsUpdate })));
      const read = await get(h, { ...ids(), editorId: 'e1' });

      expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
      expect(read.body.result?.data[0].data).toEqual(Object.fromEntries(updates.map((_, i) => [`client-${i}`, i])));
    });

    it('keeps concurrent replacements and merges consistent: the last write is complete, the merges survive', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'start' });
      const state = (await get(h, { ...ids(), editorId: 'e1', format: 'yjs' })).body.result?.data[0].state as string;
      const client = clientDoc(state);
      client.getText('content').insert(0, '[client]');

      await Promise.all([
        update(h, { ...ids(), editorId: 'e1', type: 'text', data: 'start and more' }),
        update(h, { ...ids(), editorId: 'e1', yjsUpdate: base64(Y.encodeStateAsUpdate(client)) }),
      ]);
      const text = (await get(h, { ...ids(), editorId: 'e1' })).body.result?.data[0].data as string;

      // Merge first: the replacement then removes '[client]' (it replaces the whole text). Replacement first: the
      // merge adds '[client]' to the replaced text. Anything else lost a write.
      expect(['start and more', '[client]start and more']).toContain(text);
    });
  });

  describe('under concurrent updates of one editor', () => {
    /** Yjs updates of clients that each loaded `state` and inserted their own text at the start. */
    const insertions = (state: string, count: number) =>
      Array.from({ length: count }, (_, i) => {
        const client = clientDoc(state);
        const known = Y.encodeStateVector(client);
        client.getText('content').insert(0, `<${i}>`);
        return base64(Y.encodeStateAsUpdate(client, known));
      });

    it('merges 200 concurrent Yjs updates: every one succeeds, and the text holds all 200 insertions', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'base' });
      const state = (await get(h, { ...ids(), editorId: 'e1', format: 'yjs' })).body.result?.data[0].state as string;
      const updates = insertions(state, 200);

      const replies = await Promise.all(
        updates.map((yjsUpdate, i) => update(h, { ...ids(), editorId: 'e1', yjsUpdate, userId: `u${i}` })),
      );
      const read = await get(h, { ...ids(), editorId: 'e1', format: 'yjs' });

      expect(replies.filter((reply) => reply.statusCode !== 200).map((reply) => reply.body.error)).toEqual([]);
      const text = read.body.result?.data[0].data as string;
      expect(updates.map((_, i) => `<${i}>`).filter((inserted) => !text.includes(inserted))).toEqual([]);
      expect(text).toMatch(/^(<\d+>){200}base$/);
      expect(clientDoc(read.body.result?.data[0].state).getText('content').toString()).toBe(text);
      expect(read.body.result?.data[0].lastUpdatedBy).toMatch(/^u\d+$/);
    });

    it('shows readers during the updates only whole states, and later writes fold the appended changes back in', async () => {
      const editorId = uniqueId('e');
      await add(h, { ...ids(), editorId, type: 'text', data: 'base' });
      const state = (await get(h, { ...ids(), editorId, format: 'yjs' })).body.result?.data[0].state as string;
      const updates = insertions(state, 120);

      const reads: string[] = [];
      const reader = async () => {
        for (let i = 0; i < 10; i += 1) reads.push((await get(h, { ...ids(), editorId })).body.result?.data[0].data);
      };
      const [replies] = await Promise.all([
        Promise.all(updates.map((yjsUpdate) => update(h, { ...ids(), editorId, yjsUpdate }))),
        reader(),
        reader(),
      ]);
      const appended = (await storedItems(editorId)).filter((item) => item.delta !== undefined).length;
      for (let i = 0; i < 3; i += 1) await update(h, { ...ids(), editorId, type: 'text', data: `folded ${i}` });

      expect(replies.map((reply) => reply.statusCode)).toEqual(updates.map(() => 200));
      expect(reads).toHaveLength(20);
      for (const text of reads) expect(text).toMatch(/^(<\d+>)*base$/);
      expect(appended).toBeGreaterThan(0);
      expect(await storedItems(editorId)).toHaveLength(1);
      // The log's counters went up with every delta appended and down with every one folded.
      expect((await allItems(editorId)).find((item) => String(item.sk).endsWith('#LOG'))).toMatchObject({
        logBytes: 0,
        logItems: 0,
      });
      expect((await get(h, { ...ids(), editorId })).body.result?.data[0].data).toBe('folded 2');
    });

    it('never fails concurrent replacements: they merge as concurrent edits, and the next replacement is exact', async () => {
      await add(h, { ...ids(), editorId: 'm', type: 'map', data: { shared: 0 } });

      const replies = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          update(h, { ...ids(), editorId: 'm', type: 'map', data: { shared: i, [`own${i}`]: i } }),
        ),
      );
      const merged = (await get(h, { ...ids(), editorId: 'm' })).body.result?.data[0].data;
      await update(h, { ...ids(), editorId: 'm', type: 'map', data: { final: true } });

      expect(replies.filter((reply) => reply.statusCode !== 200).map((reply) => reply.body.error)).toEqual([]);
      expect(typeof merged.shared).toBe('number');
      expect((await get(h, { ...ids(), editorId: 'm' })).body.result?.data[0].data).toEqual({ final: true });
    });
  });

  describe('large states', () => {
    it('round-trips a ~900 KB state byte-exact across parts', async () => {
      const editorId = uniqueId('big');
      const doc = new Y.Doc();
      doc.getText('content').insert(0, bigText(900_000));
      const state = Y.encodeStateAsUpdate(doc);
      await createEditor(tenant.apiKeyId, {
        ...ids(),
        editorId,
        type: 'text',
        contentKey: 'content',
        state,
        lastUpdate: new Date().toISOString(),
        lastUpdatedBy: null,
      });

      const read = await get(h, { ...ids(), editorId, format: 'yjs' });

      expect(state.length).toBeGreaterThan(2 * PART_BYTES);
      expect(read.body.result?.data[0].state).toBe(base64(state));
      expect(read.body.result?.data[0].data).toBe(doc.getText('content').toString());
      expect(await storedItems(editorId)).toHaveLength(Math.ceil(state.length / PART_BYTES));
    });

    it('adds ~900 KB of text through the API, and deletes the parts a shorter state no longer needs', async () => {
      const editorId = uniqueId('big');
      const text = bigText(900_000);

      const added = await add(h, { ...ids(), editorId, type: 'text', data: text });
      const read = await get(h, { ...ids(), editorId, format: 'yjs' });
      const partsBefore = (await storedItems(editorId)).length;
      await update(h, { ...ids(), editorId, type: 'text', data: 'short' });

      expect(added.statusCode).toBe(200);
      expect(read.body.result?.data[0].data).toBe(text);
      expect(clientDoc(read.body.result?.data[0].state).getText('content').toString()).toBe(text);
      expect(partsBefore).toBe(3);
      expect(await storedItems(editorId)).toHaveLength(1);
      expect((await get(h, { ...ids(), editorId })).body.result?.data[0].data).toBe('short');
    });

    it('never returns a mix of two states while a multi-part state is being rewritten', async () => {
      const editorId = uniqueId('big');
      const [first, second] = [bigText(700_000), bigText(700_000)];
      await add(h, { ...ids(), editorId, type: 'text', data: first });

      const writes = (async () => {
        for (let i = 0; i < 6; i += 1)
          await update(h, { ...ids(), editorId, type: 'text', data: i % 2 === 0 ? second : first });
      })();
      const reads: string[] = [];
      const reader = async () => {
        for (let i = 0; i < 6; i += 1) reads.push((await get(h, { ...ids(), editorId })).body.result?.data[0].data);
      };
      await Promise.all([writes, reader(), reader()]);

      expect(reads).toHaveLength(12);
      for (const text of reads) expect(text === first || text === second).toBe(true);
    });

    it('never assembles a part written by another write: the read retries, then answers ABORTED', async () => {
      const editorId = uniqueId('big');
      await add(h, { ...ids(), editorId, type: 'text', data: bigText(700_000) });
      const part = (await storedItems(editorId)).find((item) => item.part === 1);

      // What a Query overlapping a transaction can see: the head of one write with a part of another.
      await db.send(new PutCommand({ TableName: TABLE_NAME, Item: { ...part, writeId: randomUUID() } }));
      const read = await get(h, { ...ids(), editorId });

      expect(read.statusCode).toBe(409);
      expect(read.body.error?.status).toBe('ABORTED');
      expect(read.headers['Retry-After']).toBe('1');
    });

    it('refuses a merge that would grow the state beyond 3 MiB, and refuses to return more than a response holds', async () => {
      await add(h, { ...ids(), editorId: 'big', type: 'text', data: '' });
      const client = new Y.Doc();
      const merges = [];
      for (let i = 0; i < 5; i += 1) {
        const known = Y.encodeStateVector(client);
        client.getText('content').insert(0, bigText(700_000));
        merges.push(
          await update(h, { ...ids(), editorId: 'big', yjsUpdate: base64(Y.encodeStateAsUpdate(client, known)) }),
        );
      }
      const asJson = await get(h, { ...ids(), editorId: 'big' });
      const asYjs = await get(h, { ...ids(), editorId: 'big', format: 'yjs' });

      expect(merges.map((m) => m.statusCode)).toEqual([200, 200, 200, 200, 400]);
      expect(merges[4].body.error?.message).toBe('The CRDT state would exceed the limit of 3145728 bytes.');
      expect((asJson.body.result?.data[0].data as string).length).toBe(2_800_000);
      expect(asYjs.body.error?.status).toBe('OUT_OF_RANGE');
    });
  });

  describe('identifiers and tenancy', () => {
    it('keeps ids containing the key separator apart', async () => {
      const editors = ['e', 'e#HEAD', 'e#PART#0001', 'E#e', '%23'];
      organizationId = `o#CRDT#${randomUUID()}`;
      documentId = 'd#E#e';

      for (const editorId of editors) await add(h, { ...ids(), editorId, type: 'text', data: `data of ${editorId}` });
      await add(h, { organizationId, documentId: 'd', editorId: 'E#e#HEAD', type: 'text', data: 'other document' });
      const read = await get(h, ids());
      const single = await get(h, { ...ids(), editorId: 'e#HEAD' });

      const records = read.body.result?.data as Array<{ id: string; data: string }>;
      expect(records.map((r) => [r.id, r.data]).sort()).toEqual(editors.map((e) => [e, `data of ${e}`]).sort());
      expect(single.body.result?.data.map((r: { data: string }) => r.data)).toEqual(['data of e#HEAD']);
    });

    it('lets neither a sibling key of the workspace nor another workspace read or change the data', async () => {
      await add(h, { ...ids(), editorId: 'e1', type: 'text', data: 'private' });
      const sibling = await siblingKey(tenant);
      const stranger = (await newTenant()).apiKeyHeaders;

      for (const other of [sibling, stranger]) {
        const read = await get(other, { ...ids(), editorId: 'e1' });
        const all = await get(other, ids());
        const changed = await update(other, { ...ids(), editorId: 'e1', type: 'text', data: 'hacked' });
        const added = await add(other, { ...ids(), editorId: 'e1', type: 'text', data: 'their own' });

        expect(read.body.result?.data).toEqual([]);
        expect(all.body.result?.data).toEqual([]);
        expect(changed.body.error?.status).toBe('NOT_FOUND');
        expect(added.statusCode).toBe(200);
        expect((await get(other, { ...ids(), editorId: 'e1' })).body.result?.data[0].data).toBe('their own');
      }
      expect((await get(h, ids())).body.result?.data.map((r: { data: string }) => r.data)).toEqual(['private']);
    });
  });
});
