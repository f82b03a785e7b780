/**
 * Compaction of an editor's log (shared/domain/stream/crdt-compaction.ts, shared/db/crdt.ts compactEditor): live
 * edits append one delta each; the compaction consumer, handed their stream records, folds the log into the state
 * once it has grown past COMPACT_LOG_ITEMS or COMPACT_LOG_BYTES, without changing the content, and its fold is no
 * `crdt.update_data` event. The consumer runs under its own grants (local/grant-check.ts).
 */
import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import * as Y from 'yjs';
import { runAsWorker } from '../../local/grant-check';
import { handler as addCrdt } from '../../functions/crdt/add';
import { handler as getCrdt } from '../../functions/crdt/get';
import { handler as updateCrdt } from '../../functions/crdt/update';
import { TABLE_NAME, db } from '../../shared/db/client';
import {
  COMPACT_LOG_BYTES,
  COMPACT_LOG_ITEMS,
  appendEditorUpdate,
  editorIncarnation,
  getEditor,
  type EditorRef,
} from '../../shared/db/crdt';
import { listDeadLetters } from '../../shared/db/dead-letter';
import { decodeChange } from '../../shared/db/item-change';
import { documentLockKey } from '../../shared/db/migration';
import { handler as compactionHandler } from '../../shared/domain/stream/crdt-compaction';
import { changeOf } from '../../shared/domain/webhooks/events';
import { crdtCompactionConsumer } from '../../shared/workers';
import { newTenant, type Tenant } from '../support/fixtures';
import { endpoint } from '../support/invoke';
import { uniqueId } from '../support/ids';

const add = endpoint(addCrdt, '/v2/crdt/add');
const get = endpoint(getCrdt, '/v2/crdt/get');
const update = endpoint(updateCrdt, '/v2/crdt/update');

/** The consumer as the stream reader runs it, under the consumer's grants. */
const compact = (event: DynamoDBStreamEvent) => runAsWorker(crdtCompactionConsumer, () => compactionHandler(event));

describe('CRDT log compaction', () => {
  let tenant: Tenant;
  let ref: EditorRef;

  beforeAll(async () => {
    tenant = await newTenant();
  });

  beforeEach(async () => {
    ref = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
    const added = await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' });
    expect(added.statusCode).toBe(200);
  });

  /** A client that loaded the stored editor: its edits are Yjs updates against the stored state. */
  async function client(): Promise<Y.Doc> {
    const stored = await getEditor(tenant.apiKeyId, ref);
    const doc = new Y.Doc();
    Y.applyUpdate(doc, stored?.state as Uint8Array);
    for (const delta of stored?.deltas ?? []) Y.applyUpdate(doc, delta.update);
    return doc;
  }

  /** Appends each of `texts` as one live edit (one delta each), as the live message handler does. */
  async function appendEdits(texts: readonly string[]): Promise<void> {
    const doc = await client();
    const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
    for (const text of texts) {
      let captured: Uint8Array | undefined;
      const capture = (update: Uint8Array) => (captured = update);
      doc.on('update', capture);
      doc.getText('content').insert(doc.getText('content').length, text);
      doc.off('update', capture);
      await appendEditorUpdate(tenant.apiKeyId, ref, incarnation, {
        update: captured as Uint8Array,
        lastUpdate: new Date().toISOString(),
        lastUpdatedBy: 'ann',
      });
    }
    partition = (await getEditor(tenant.apiKeyId, ref))?.deltas[0]?.key.pk as string;
  }

  /** The stream records of the editor's deltas, as the changes reader hands them to the consumer. */
  async function deltaRecords(): Promise<DynamoDBStreamEvent> {
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

  const content = async () => (await get(tenant, { ...ref, format: 'yjs' })).body.result?.data[0].data as string;

  /** The editor's head item: in the partition of its deltas (shared/db/crdt.ts), remembered by appendEdits. */
  let partition = '';
  async function headItem(): Promise<Record<string, unknown>> {
    const { Item } = await db.send(
      new GetCommand({ TableName: TABLE_NAME, Key: { pk: partition, sk: 'E#body#HEAD' }, ConsistentRead: true }),
    );
    return Item as Record<string, unknown>;
  }

  it(`folds a log of more than ${COMPACT_LOG_ITEMS} deltas into the state, and the content stays the same`, async () => {
    const edits = Array.from({ length: COMPACT_LOG_ITEMS + 1 }, (_, i) => ` ${i}`);
    await appendEdits(edits);
    const before = await getEditor(tenant.apiKeyId, ref);
    const contentBefore = await content();
    const headBefore = await headItem();

    const result = await compact(await deltaRecords());

    const after = await getEditor(tenant.apiKeyId, ref);
    expect(result.batchItemFailures).toEqual([]);
    expect(before?.deltas).toHaveLength(COMPACT_LOG_ITEMS + 1);
    // One transaction deletes what it holds; the rest is in the state too and goes with the next fold.
    expect(after?.deltas.length).toBeLessThan(10);
    expect(after?.version).toBe((before?.version ?? 0) + 1);
    expect(contentBefore).toBe(`Hello${edits.join('')}`);
    expect(await content()).toBe(contentBefore);
    expect(after?.lastUpdatedBy).toBe('ann');
    // Its head is marked as a compaction: the changes reader raises no crdt.update_data event for it.
    const headAfter = await headItem();
    expect(headAfter.compaction).toBe(true);
    expect(changeOf(decodeChange({ eventName: 'MODIFY', oldImage: headBefore, newImage: headAfter }))).toBeUndefined();
  });

  it(`folds a log of more than ${COMPACT_LOG_BYTES} bytes in a few deltas`, async () => {
    const edits = Array.from({ length: 3 }, () =>
      randomBytes(COMPACT_LOG_BYTES / 2)
        .toString('base64url')
        .slice(0, COMPACT_LOG_BYTES / 2),
    );
    await appendEdits(edits);
    const contentBefore = await content();

    const result = await compact(await deltaRecords());

    expect(result.batchItemFailures).toEqual([]);
    expect((await getEditor(tenant.apiKeyId, ref))?.deltas).toEqual([]);
    expect(await content()).toBe(contentBefore);
    expect(contentBefore).toBe(`Hello${edits.join('')}`);
  });

  it('leaves the log of a document being migrated to move with it: no retry, no dead letter', async () => {
    await appendEdits(Array.from({ length: COMPACT_LOG_ITEMS + 1 }, (_, i) => ` ${i}`));
    const lock = documentLockKey(tenant.apiKeyId, ref.organizationId, ref.documentId);
    await db.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: { ...lock, migrationId: uniqueId('mig'), documentId: ref.documentId },
      }),
    );
    let result;
    try {
      result = await compact(await deltaRecords());
    } finally {
      await db.send(new DeleteCommand({ TableName: TABLE_NAME, Key: lock }));
    }

    expect(result.batchItemFailures).toEqual([]);
    expect((await getEditor(tenant.apiKeyId, ref))?.deltas).toHaveLength(COMPACT_LOG_ITEMS + 1);
    const { letters } = await listDeadLetters(100);
    expect(letters.filter((letter) => JSON.stringify(letter.record).includes(partition))).toEqual([]);
  });

  it('writes nothing while the log is within its bounds', async () => {
    await appendEdits([' a', ' b', ' c']);
    const headBefore = await headItem();

    const result = await compact(await deltaRecords());

    expect(result.batchItemFailures).toEqual([]);
    expect((await getEditor(tenant.apiKeyId, ref))?.deltas).toHaveLength(3);
    expect(await headItem()).toEqual(headBefore);
    expect(await content()).toBe('Hello a b c');
  });

  it('lets the next write of the content raise its event again (the mark goes with the fold)', async () => {
    await appendEdits(Array.from({ length: COMPACT_LOG_ITEMS + 1 }, () => '.'));
    await compact(await deltaRecords());
    const folded = await headItem();

    const updated = await update(tenant, { ...ref, type: 'text', data: 'Rewritten', userId: 'bob' });

    const written = await headItem();
    expect(updated.statusCode).toBe(200);
    expect(written.compaction).toBeUndefined();
    expect(changeOf(decodeChange({ eventName: 'MODIFY', oldImage: folded, newImage: written }))).toEqual({
      kind: 'editor',
      apiKeyId: tenant.apiKeyId,
      editor: ref,
    });
  });

  it('is handed records of other items without touching anything', async () => {
    const result = await compact({
      Records: [
        {
          eventName: 'INSERT',
          dynamodb: {
            NewImage: marshall({ pk: 'x', sk: 'E#y#HEAD', lastUpdate: 'now' }) as never,
            SequenceNumber: '1',
          },
        },
      ],
    });

    expect(result.batchItemFailures).toEqual([]);
  });
});
