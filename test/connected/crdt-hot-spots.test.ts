/**
 * Issue 30 item 4, hot spots and unbounded work on the CRDT write path:
 * - the migration lock a write checks is one per document, in a partition of its own: writes to two documents of
 *   one organization share no item (no per-organization cap), and a migration still refuses them (decisions §5);
 */
import * as Y from 'yjs';
import { handler as addCrdt } from '../../functions/crdt/add';
import { handler as getCrdt } from '../../functions/crdt/get';
import { handler as updateCrdt } from '../../functions/crdt/update';
import { dynamodb } from '../../shared/db/client';
import { FailedPreconditionError } from '../../shared/core/errors';
import { appendEditorUpdate, editorIncarnation, getEditor, type EditorRef } from '../../shared/db/crdt';
import { startMigrationItems } from '../../shared/db/migration';
import { organizationPartition } from '../../shared/db/organization';
import { transactWrite } from '../../shared/db/transact';
import { documentsIn, transactGuarded } from '../../shared/domain/document-locks';
import { newTenant, type Tenant } from '../support/fixtures';
import { endpoint } from '../support/invoke';
import { uniqueId } from '../support/ids';

const add = endpoint(addCrdt, '/v2/crdt/add');
const get = endpoint(getCrdt, '/v2/crdt/get');
const update = endpoint(updateCrdt, '/v2/crdt/update');

/** A client that loaded the stored editor: its edits are Yjs updates against the stored content. */
async function client(tenant: Tenant, ref: EditorRef): Promise<Y.Doc> {
  const stored = await getEditor(tenant.apiKeyId, ref);
  const doc = new Y.Doc();
  Y.applyUpdate(doc, stored?.state as Uint8Array);
  for (const delta of stored?.deltas ?? []) Y.applyUpdate(doc, delta.update);
  return doc;
}

/** The update that appends `text` to the client's content. */
function typed(doc: Y.Doc, text: string): Uint8Array {
  let captured: Uint8Array | undefined;
  const capture = (change: Uint8Array) => (captured = change);
  doc.on('update', capture);
  doc.getText('content').insert(doc.getText('content').length, text);
  doc.off('update', capture);
  return captured as Uint8Array;
}

/** A live append as the live message handler makes it: the document's migration-lock check in the same write. */
function liveAppend(tenant: Tenant, ref: EditorRef, incarnation: string, change: Uint8Array) {
  const guarded = (items: Parameters<typeof transactGuarded>[1]) => transactGuarded(tenant.apiKeyId, items, documentsIn(ref.organizationId, [ref.documentId]));
  return appendEditorUpdate(tenant.apiKeyId, ref, incarnation, { update: change, lastUpdate: new Date().toISOString(), lastUpdatedBy: 'ann' }, guarded);
}

const content = async (tenant: Tenant, ref: EditorRef) => (await get(tenant, { ...ref })).body.result?.data[0].data as string;

/** The partition keys of every item in every transaction sent while `work` runs. */
async function transactionPartitions(work: () => Promise<unknown>): Promise<string[]> {
  const partitions: string[] = [];
  const name = uniqueId('recorder');
  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand') {
        for (const item of (args.input as { TransactItems: Array<Record<string, { Key?: Record<string, unknown>; Item?: Record<string, unknown> }>> }).TransactItems) {
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
      for (const ref of [first, second]) expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);

      const writesOf = async (ref: EditorRef) => transactionPartitions(async () => {
        const doc = await client(tenant, ref);
        await liveAppend(tenant, ref, (await editorIncarnation(tenant.apiKeyId, ref)) as string, typed(doc, ' live'));
        expect((await update(tenant, { ...ref, type: 'text', data: 'Hello rest', userId: 'ann' })).statusCode).toBe(200);
      });
      const firstPartitions = new Set(await writesOf(first));
      const secondPartitions = new Set(await writesOf(second));

      expect(firstPartitions.size).toBeGreaterThan(0);
      expect([...firstPartitions].filter((pk) => secondPartitions.has(pk))).toEqual([]);
      expect([...firstPartitions, ...secondPartitions]).not.toContain(organizationPartition(tenant.apiKeyId, organizationId));
    });

    it('still refuses a live append to either document id, and a REST write, while a migration holds it', async () => {
      const ref: EditorRef = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
      expect((await add(tenant, { ...ref, type: 'text', data: 'Hello', userId: 'ann' })).statusCode).toBe(200);
      const doc = await client(tenant, ref);
      const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
      const newDocumentId = uniqueId('doc');
      const now = Date.now();
      await transactWrite(startMigrationItems({
        apiKeyId: tenant.apiKeyId, organizationId: ref.organizationId, migrationId: uniqueId('mig'), documentId: ref.documentId, newDocumentId,
        status: 'pending', attempts: 0, createdAt: now, updatedAt: now,
      }));

      await expect(liveAppend(tenant, ref, incarnation, typed(doc, ' late'))).rejects.toThrow(FailedPreconditionError);
      await expect(liveAppend(tenant, { ...ref, documentId: newDocumentId }, incarnation, typed(doc, ' there'))).rejects.toThrow(FailedPreconditionError);
      const rest = await update(tenant, { ...ref, type: 'text', data: 'Rewritten', userId: 'ann' });
      expect(rest.body.error?.status).toBe('FAILED_PRECONDITION');
      expect(rest.statusCode).toBe(400);
      expect((await getEditor(tenant.apiKeyId, ref))?.deltas).toEqual([]);
      expect(await content(tenant, ref)).toBe('Hello');
    });
  });
});
