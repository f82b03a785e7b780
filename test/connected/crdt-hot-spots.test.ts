/**
 * Issue 30 item 4, hot spots and unbounded work on the CRDT write path:
 * - the migration lock a write checks is one per document, in a partition of its own: writes to two documents of
 *   one organization share no item (no per-organization cap), and a migration still refuses them (decisions §5);
 * - compaction decides from the editor's log counters (one small item), and reads the whole editor only to fold;
 * - a live append keeps the log bound (MAX_LOG_BYTES) that REST writes keep: when the log is full it folds instead,
 *   and nothing the client sent is lost.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import * as Y from 'yjs';
import { runAsWorker } from '../../local/grant-check';
import { handler as addCrdt } from '../../functions/crdt/add';
import { handler as getCrdt } from '../../functions/crdt/get';
import { handler as updateCrdt } from '../../functions/crdt/update';
import { TABLE_NAME, db, dynamodb } from '../../shared/db/client';
import {
  MAX_DELTA_BYTES,
  MAX_LOG_BYTES,
  appendEditorUpdate,
  compactEditor,
  documentCrdtQuery,
  editorIncarnation,
  editorLog,
  getEditor,
  lockEditorLogs,
  type EditorRef,
} from '../../shared/db/crdt';
import { startMigrationItems } from '../../shared/db/migration';
import { organizationPartition } from '../../shared/db/organization';
import { queryAll } from '../../shared/db/query';
import { transactWrite } from '../../shared/db/transact';
import { editorState } from '../../shared/domain/crdt/yjs-state';
import { handler as compactionHandler } from '../../shared/domain/stream/crdt-compaction';
import { encodeFrames } from '../../shared/domain/live/framing';
import { updateMessage } from '../../shared/domain/live/protocol';
import { crdtCompactionConsumer } from '../../shared/workers';
import { measureCapacity } from '../support/capacity-meter';
import { newTenant, type Tenant } from '../support/fixtures';
import { endpoint } from '../support/invoke';
import { client, typed } from '../support/editor-clients';
import { uniqueId } from '../support/ids';
import { callSocket, openLiveRoom } from '../support/live-harness';

const add = endpoint(addCrdt, '/v2/crdt/add');
const get = endpoint(getCrdt, '/v2/crdt/get');
const update = endpoint(updateCrdt, '/v2/crdt/update');
const compact = (event: DynamoDBStreamEvent) => runAsWorker(crdtCompactionConsumer, () => compactionHandler(event));

/**
 * A live append as the live message handler makes it: no check of the document's lock item, the LOG item's
 * condition refuses it once a migration locked it (test/connected/crdt-migration-lock.test.ts).
 */
function liveAppend(tenant: Tenant, ref: EditorRef, incarnation: string, change: Uint8Array) {
  return appendEditorUpdate(
    tenant.apiKeyId,
    ref,
    incarnation,
    { update: change, lastUpdate: new Date().toISOString(), lastUpdatedBy: 'ann' },
    transactWrite,
  );
}

/** The stream records of the editor's deltas, as the changes reader hands them to the compaction consumer. */
async function deltaRecords(tenant: Tenant, ref: EditorRef): Promise<DynamoDBStreamEvent> {
  const stored = await getEditor(tenant.apiKeyId, ref);
  const items = await Promise.all(
    (stored?.deltas ?? []).map(
      async ({ key }) =>
        (await db.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true }))).Item,
    ),
  );
  return {
    Records: items.map((item, i) => ({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      dynamodb: {
        Keys: marshall({ pk: item?.pk, sk: item?.sk }) as never,
        NewImage: marshall(item ?? {}, { removeUndefinedValues: true }) as never,
        SequenceNumber: String(i + 1).padStart(21, '0'),
      },
    })),
  };
}

const logBytes = (editor: Awaited<ReturnType<typeof getEditor>>) =>
  (editor?.deltas ?? []).reduce((sum, delta) => sum + delta.update.length, 0);
const content = async (tenant: Tenant, ref: EditorRef) =>
  (await get(tenant, { ...ref })).body.result?.data[0].data as string;

/** The partition keys of every item in every transaction sent while `work` runs. */
async function transactionPartitions(work: () => Promise<unknown>): Promise<string[]> {
  const partitions: string[] = [];
  const name = uniqueId('recorder');
  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        for (const item of (
          args.input as {
            TransactItems: Array<Record<string, { Key?: Record<string, unknown>; Item?: Record<string, unknown> }>>;
          }
        ).TransactItems) {
          const action = Object.values(item)[0];
          const pk = (action.Key ?? action.Item)?.pk as { S?: string } | string | undefined;
          partitions.push(typeof pk === 'string' ? pk : String(pk?.S));
        }
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await work();
  } finally {
    dynamodb.middlewareStack.remove(name);
  }
  return partitions;
}

describe('CRDT writes: hot spots and unbounded work', () => {
  let tenant: Tenant;

  beforeAll(async () => {
    tenant = await newTenant();
  });

  describe('the migration lock of a write', () => {
    it('is one per document outside the organization partition: writes to two documents of one organization share no partition', async () => {
      const organizationId = uniqueId('org');
      const first: EditorRef = { organizationId, documentId: uniqueId('doc'), editorId: 'body' };
      const second: EditorRef = { ...first, documentId: uniqueId('doc') };
      for (const ref of [first, second])
        expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);

      const writesOf = async (ref: EditorRef) =>
        transactionPartitions(async () => {
          const doc = await client(tenant, ref);
          await liveAppend(tenant, ref, (await editorIncarnation(tenant.apiKeyId, ref)) as string, typed(doc, ' live'));
          expect((await update(tenant, { ...ref, type: 'text', data: 'Hello rest', userId: 'ann' })).statusCode).toBe(
            200,
          );
        });
      const firstPartitions = new Set(await writesOf(first));
      const secondPartitions = new Set(await writesOf(second));

      expect(firstPartitions.size).toBeGreaterThan(0);
      expect([...firstPartitions].filter((pk) => secondPartitions.has(pk))).toEqual([]);
      expect([...firstPartitions, ...secondPartitions]).not.toContain(
        organizationPartition(tenant.apiKeyId, organizationId),
      );
    });

    it('still refuses a live append to either document id once the migration locked the logs, and a REST write', async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);
      const doc = await client(tenant, ref);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      const newDocumentId = uniqueId('doc');
      const now = Date.now();
      const migrationId = uniqueId('mig');
      await transactWrite(
        startMigrationItems({
          apiKeyId: tenant.apiKeyId,
          organizationId: ref.organizationId,
          migrationId,
          documentId: ref.documentId,
          newDocumentId,
          status: 'pending',
          attempts: 0,
          createdAt: now,
          updatedAt: now,
        }),
      );

      // What the worker does before it reads the CRDT data.
      await lockEditorLogs(tenant.apiKeyId, ref.organizationId, ref.documentId, migrationId);

      // Refused (false: the live handler's fold then fails the document's lock check).
      await expect(liveAppend(tenant, ref, incarnation, typed(doc, ' late'))).resolves.toBe(false);
      await expect(
        liveAppend(tenant, { ...ref, documentId: newDocumentId }, incarnation, typed(doc, ' there')),
      ).resolves.toBe(false);
      const rest = await update(tenant, { ...ref, type: 'text', data: 'Rewritten', userId: 'ann' });
      expect(rest.body.error?.status).toBe('FAILED_PRECONDITION');
      expect(rest.statusCode).toBe(400);
      expect((await getEditor(tenant.apiKeyId, ref))?.deltas).toEqual([]);
      expect(await content(tenant, ref)).toBe('Hello');
    });
  });

  describe('compaction', () => {
    it('decides from the log counters: a short log of a ~1 MB editor costs at most 1 read unit and no write', async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      const text = Buffer.from(Array.from({ length: 700_000 }, (_, i) => (i * 7919) % 251))
        .toString('base64')
        .slice(0, 900_000);
      expect((await add(tenant, { ...ref, type: 'text', data: text, userId: 'ann' })).statusCode).toBe(200);
      const doc = await client(tenant, ref);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      for (const keystroke of ['a', 'b', 'c']) await liveAppend(tenant, ref, incarnation, typed(doc, keystroke));
      const records = await deltaRecords(tenant, ref);
      const measured = await measureCapacity(dynamodb, () => compact(records));

      expect(measured.value.batchItemFailures).toEqual([]);
      expect(measured.capacity.read).toBeLessThanOrEqual(1);
      expect(measured.capacity.write).toBe(0);
      expect((await getEditor(tenant.apiKeyId, ref))?.deltas).toHaveLength(3);
    });

    /** The delta items stored for the document, whatever the head says of them. */
    const storedDeltas = async (ref: EditorRef) =>
      (await queryAll(documentCrdtQuery(tenant.apiKeyId, ref.organizationId, ref.documentId))).filter(
        (item) => item.delta !== undefined,
      );

    it('deletes the deltas it folded after its transaction, at 1 write unit each rather than 2 inside it', async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);
      const doc = await client(tenant, ref);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      const edits = Array.from({ length: 120 }, (_, i) => ` ${i}`);
      for (const edit of edits) await liveAppend(tenant, ref, incarnation, typed(doc, edit));
      const records = await deltaRecords(tenant, ref);
      const measured = await measureCapacity(dynamodb, () => compact(records));

      expect(measured.value.batchItemFailures).toEqual([]);
      // One unit per delta deleted; in the transaction, the LOG item and the head (2 units a KB), which names the
      // deltas it folded (37 bytes each). Deleting them inside the transaction cost 2 units each (250 in all).
      expect(measured.capacity.write).toBeLessThanOrEqual(edits.length * 1.1 + 10);
      expect(await storedDeltas(ref)).toEqual([]);
      expect(await content(tenant, ref)).toBe(`Hello${edits.join('')}`);
    });

    it('leaves a correct editor when it stops between its fold and the deletes, and the next fold deletes them', async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);
      const doc = await client(tenant, ref);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      const first = Array.from({ length: 120 }, (_, i) => ` a${i}`);
      for (const edit of first) await liveAppend(tenant, ref, incarnation, typed(doc, edit));

      // The fold's transaction commits, then the worker dies before anything else.
      const crash = new Error('crashed after the fold');
      await expect(
        compactEditor(tenant.apiKeyId, ref, editorState, async (items) => {
          await transactWrite(items);
          throw crash;
        }),
      ).rejects.toBe(crash);

      // The folded deltas are still stored, but the editor reads as the fold left it and counts none of them.
      expect(await storedDeltas(ref)).toHaveLength(first.length);
      const afterCrash = await getEditor(tenant.apiKeyId, ref);
      expect(afterCrash?.deltas).toEqual([]);
      expect(afterCrash?.folded).toHaveLength(first.length);
      expect(await content(tenant, ref)).toBe(`Hello${first.join('')}`);
      expect(await editorLog(tenant.apiKeyId, ref)).toMatchObject({ items: 0, bytes: 0 });

      // Typing goes on; the next fold takes the new deltas in and deletes the old ones too, counting each once.
      const second = Array.from({ length: 110 }, (_, i) => ` b${i}`);
      for (const edit of second) await liveAppend(tenant, ref, incarnation, typed(doc, edit));
      expect(await editorLog(tenant.apiKeyId, ref)).toMatchObject({ items: second.length });
      const result = await compact(await deltaRecords(tenant, ref));

      expect(result.batchItemFailures).toEqual([]);
      expect(await storedDeltas(ref)).toEqual([]);
      expect(await editorLog(tenant.apiKeyId, ref)).toMatchObject({ items: 0, bytes: 0 });
      expect(await content(tenant, ref)).toBe(`Hello${first.join('')}${second.join('')}`);
    });

    it('deletes every delta a fold took in, also more than one transaction holds', async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);
      const doc = await client(tenant, ref);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      const edits = Array.from({ length: 150 }, (_, i) => ` ${i}`);
      for (const edit of edits) await liveAppend(tenant, ref, incarnation, typed(doc, edit));

      const result = await compact(await deltaRecords(tenant, ref));

      expect(result.batchItemFailures).toEqual([]);
      expect((await getEditor(tenant.apiKeyId, ref))?.deltas).toEqual([]);
      expect(await content(tenant, ref)).toBe(`Hello${edits.join('')}`);
    });
  });

  describe('a live append', () => {
    /** Fills the editor's log to a few bytes short of MAX_LOG_BYTES (less than any edit) with two large appends. */
    async function fillLog(ref: EditorRef, incarnation: string): Promise<string> {
      const doc = await client(tenant, ref);
      const firstText = 'a'.repeat(MAX_DELTA_BYTES - 1000);
      const first = typed(doc, firstText);
      const overhead = first.length - firstText.length;
      // Yjs's variable-length integers (the client id, the clock, the length) make the second append's overhead differ
      // from the first's by a few bytes: size its text on a copy of the client, then type it.
      const target = MAX_LOG_BYTES - 5 - first.length;
      let secondText = 'b'.repeat(target - overhead);
      for (
        let excess = trialLength(doc, secondText) - target;
        excess > 0;
        excess = trialLength(doc, secondText) - target
      )
        secondText = secondText.slice(excess);
      const second = typed(doc, secondText);
      expect(first.length + second.length).toBeGreaterThan(MAX_LOG_BYTES - 12);
      expect(first.length + second.length).toBeLessThanOrEqual(MAX_LOG_BYTES);
      for (const change of [first, second]) expect(await liveAppend(tenant, ref, incarnation, change)).not.toBe(false);
      return firstText + secondText;
    }

    /** The length of the update typing `text` would make, typed on a copy of the client (same client id). */
    function trialLength(doc: Y.Doc, text: string): number {
      const copy = new Y.Doc();
      copy.clientID = doc.clientID;
      Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
      return typed(copy, text).length;
    }

    it('lands with every other append to the editor running at the same time, each counted once', async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      const clients = await Promise.all(Array.from({ length: 20 }, () => client(tenant, ref)));
      const changes = clients.map((doc, i) => typed(doc, ` ${i}`));

      const appended = await Promise.all(changes.map((change) => liveAppend(tenant, ref, incarnation, change)));

      expect(appended).toEqual(changes.map(() => true));
      const stored = await getEditor(tenant.apiKeyId, ref);
      expect(stored?.deltas).toHaveLength(20);
      expect(await editorLog(tenant.apiKeyId, ref)).toMatchObject({ items: 20, bytes: logBytes(stored) });
    });

    it(`is refused, writing nothing, when it would take the log past ${MAX_LOG_BYTES} bytes`, async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      await fillLog(ref, incarnation);
      const doc = await client(tenant, ref);

      const before = logBytes(await getEditor(tenant.apiKeyId, ref));
      const change = typed(doc, ' one more');
      expect(before + change.length).toBeGreaterThan(MAX_LOG_BYTES);

      const appended = await liveAppend(tenant, ref, incarnation, change);

      expect(appended).toBe(false);
      const stored = await getEditor(tenant.apiKeyId, ref);
      expect(stored?.deltas).toHaveLength(2);
      expect(logBytes(stored)).toBe(before);
    });

    it('through the live handler, folds when the log is full: the log stays bounded and the edit is stored', async () => {
      const room = await openLiveRoom(tenant);
      const ref: EditorRef = room.ids;
      const ann = await room.open('ann');
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      const filled = await fillLog(ref, incarnation);
      const doc = await client(tenant, ref);

      const change = typed(doc, 'Z');
      expect(logBytes(await getEditor(tenant.apiKeyId, ref)) + change.length).toBeGreaterThan(MAX_LOG_BYTES);

      const answer = await callSocket('$default', ann, { body: encodeFrames(updateMessage(change), 'm1')[0] });

      expect(answer).toEqual({ statusCode: 200 });
      const stored = await getEditor(tenant.apiKeyId, ref);
      expect(logBytes(stored)).toBeLessThanOrEqual(MAX_LOG_BYTES);
      expect(await content(tenant, ref)).toBe(`${filled}Z`);
    });
  });
});
