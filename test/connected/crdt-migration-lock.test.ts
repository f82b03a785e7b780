/**
 * Issue 30 item 7: a live append checks no migration lock item. It checks its editor's LOG item (which it updates
 * anyway), and a migration marks every LOG item of the document locked before it reads the CRDT data to copy it
 * (decisions §5). So an append either lands before that read and is copied, or is refused, and the connection is
 * told as a refused write always was; REST writes and new editors still check the document's lock.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import * as Y from 'yjs';
import { TABLE_NAME, db } from '../../shared/db/client';
import { FailedPreconditionError } from '../../shared/core/errors';
import * as crdt from '../../shared/db/crdt';
import { key, segment } from '../../shared/db/keys';
import { getMigration } from '../../shared/db/migration';
import { transactWrite } from '../../shared/db/transact';
import { MAX_FAILED_RUNS, recordRunFailure, runMigration, startMigration } from '../../shared/domain/migration';
import { encodeFrames } from '../../shared/domain/live/framing';
import { updateMessage } from '../../shared/domain/live/protocol';
import { newTenant, type Tenant } from '../support/fixtures';
import { client, typed } from '../support/editor-clients';
import { uniqueId } from '../support/ids';
import { callSocket, openLiveRoom } from '../support/live-harness';

const { appendEditorUpdate, editorIncarnation, editorLog, getEditor, lockEditorLogs } = crdt;
type EditorRef = crdt.EditorRef;

/** The editor's text as stored (state and deltas). */
async function text(tenant: Tenant, ref: EditorRef): Promise<string | undefined> {
  const stored = await getEditor(tenant.apiKeyId, ref);
  if (stored === undefined) return undefined;
  return (await client(tenant, ref)).getText('content').toString();
}

/** A live append as the live handler makes it (no check of the document's lock item). */
const append = (tenant: Tenant, ref: EditorRef, incarnation: string, change: Uint8Array) =>
  appendEditorUpdate(
    tenant.apiKeyId,
    ref,
    incarnation,
    { update: change, lastUpdate: new Date().toISOString(), lastUpdatedBy: 'ann' },
    transactWrite,
  );

describe('the migration lock of a live append, on the editor’s LOG item', () => {
  let tenant: Tenant;
  let frames = 0;

  beforeAll(async () => {
    tenant = await newTenant();
  });

  /** A live room with ann connected, and the migration of its document to a new id started (not yet run). */
  async function migratingRoom() {
    const room = await openLiveRoom(tenant);
    const ref: EditorRef = room.ids;
    const ann = await room.open('ann');
    const doc = await client(tenant, ref);
    const incarnation = (await editorIncarnation(tenant.apiKeyId, ref)) as string;
    const send = (change: Uint8Array) =>
      callSocket('$default', ann, { body: encodeFrames(updateMessage(change), `m${(frames += 1)}`)[0] });
    expect(await send(typed(doc, 'before'))).toEqual({ statusCode: 200 });
    const newDocumentId = uniqueId('doc');
    const migrationId = await startMigration(tenant.apiKeyId, { ...ref, newDocumentId });
    const migration = (await getMigration(tenant.apiKeyId, ref.organizationId, migrationId))!;
    return { room, ref, ann, doc, incarnation, send, newDocumentId, migration };
  }

  it('lands an append sent after the document is locked but before its LOG item is, and copies it', async () => {
    const { ref, doc, send, newDocumentId, migration } = await migratingRoom();

    // The worker has not run: the LOG item is not locked yet, and the copy has not read anything.
    expect(await send(typed(doc, ' early'))).toEqual({ statusCode: 200 });
    await expect(runMigration(migration, { deadline: Date.now() + 60_000 })).resolves.toBe('completed');

    expect(await text(tenant, { ...ref, documentId: newDocumentId })).toBe('before early');
    expect(await getEditor(tenant.apiKeyId, ref)).toBeUndefined();
    // The LOG item moved without the lock: appends at the new id land.
    const moved = { ...ref, documentId: newDocumentId };
    expect(
      (await db.send(new GetCommand({ TableName: TABLE_NAME, Key: logKeyOf(tenant.apiKeyId, moved) }))).Item?.locked,
    ).toBe(undefined);
    const incarnation = (await editorIncarnation(tenant.apiKeyId, moved)) as string;
    expect(await append(tenant, moved, incarnation, typed(doc, ' after'))).toBe(true);
    expect(await text(tenant, moved)).toBe('before early after');
  });

  it('refuses an append once its LOG item is locked, before the copy reads it: nothing is stored at either id', async () => {
    const { ref, doc, send, newDocumentId, migration, incarnation } = await migratingRoom();
    const refused: unknown[] = [];
    const appended: boolean[] = [];
    const real = crdt.lockEditorLogs;
    const spy = jest.spyOn(crdt, 'lockEditorLogs').mockImplementation(async (...args) => {
      await real(...args);
      // Between the lock and the copy: through the live handler, and as the append itself.
      refused.push(await send(typed(doc, ' late')).catch((error: unknown) => error));
      appended.push(await append(tenant, ref, incarnation, typed(doc, ' later')));
    });
    try {
      await expect(runMigration(migration, { deadline: Date.now() + 60_000 })).resolves.toBe('completed');
    } finally {
      spy.mockRestore();
    }

    // The migration closed the connection before it locked anything: its frame is dropped, never stored.
    expect(refused).toEqual([{ statusCode: 200 }]);
    expect(appended).toEqual([false]);
    expect(await text(tenant, { ...ref, documentId: newDocumentId })).toBe('before');
    // Nothing was left behind at the old id either.
    expect(await getEditor(tenant.apiKeyId, ref)).toBeUndefined();
  });

  it('refuses a live edit on a connection still open once the LOG item is locked, as a refused write always was', async () => {
    const { ref, doc, send } = await migratingRoom();
    await lockEditorLogs(tenant.apiKeyId, ref.organizationId, ref.documentId, uniqueId('mig'));

    // The append fails its LOG condition; the fold it falls back to fails the document's lock check.
    await expect(send(typed(doc, ' late'))).rejects.toThrow(FailedPreconditionError);
    expect(await text(tenant, ref)).toBe('before');
  });

  it('keeps refusing REST writes and new editors with the document lock, and appends to the new id', async () => {
    const { room, ref, doc, incarnation, newDocumentId } = await migratingRoom();
    await lockEditorLogs(tenant.apiKeyId, ref.organizationId, ref.documentId, uniqueId('mig'));

    const rest = await room.rest('/v2/crdt/update', { ...ref, type: 'text', data: 'Rewritten', userId: 'ann' });
    const created = await room.rest('/v2/crdt/add', { ...ref, editorId: 'another', type: 'text', data: 'x' });
    const there = await append(tenant, { ...ref, documentId: newDocumentId }, incarnation, typed(doc, ' there'));

    expect(rest.body.error?.status).toBe('FAILED_PRECONDITION');
    expect(created.body.error?.status).toBe('FAILED_PRECONDITION');
    expect(there).toBe(false);
    expect(await getEditor(tenant.apiKeyId, { ...ref, documentId: newDocumentId })).toBeUndefined();
    expect(await text(tenant, ref)).toBe('before');
  });

  it('refuses an append to an editor that has no LOG item yet, also while the lock marks the others', async () => {
    const { ref, doc, incarnation, send } = await migratingRoom();
    // An editor written before the counters existed.
    await db.send(new DeleteCommand({ TableName: TABLE_NAME, Key: logKeyOf(tenant.apiKeyId, ref) }));
    await lockEditorLogs(tenant.apiKeyId, ref.organizationId, ref.documentId, uniqueId('mig'));

    expect(await append(tenant, ref, incarnation, typed(doc, ' late'))).toBe(false);
    await expect(send(typed(doc, ' later'))).rejects.toThrow(FailedPreconditionError);
    expect(await editorLog(tenant.apiKeyId, ref)).toBeUndefined();
    expect(await text(tenant, ref)).toBe('before');
  });

  it('orders appends racing the lock: each one that landed is stored and copied, none lands after the lock', async () => {
    const { ref, newDocumentId, migration, incarnation } = await migratingRoom();
    const clients = await Promise.all(Array.from({ length: 20 }, () => client(tenant, ref)));
    const changes = clients.map((doc, i) => typed(doc, ` ${i}`));

    const [, ...results] = await Promise.all([
      lockEditorLogs(tenant.apiKeyId, ref.organizationId, ref.documentId, migration.migrationId),
      ...changes.map((change) => append(tenant, ref, incarnation, change)),
    ]);
    const lateDoc = await client(tenant, ref);
    const after = await append(tenant, ref, incarnation, typed(lateDoc, ' after'));
    const landed = changes.filter((_, i) => results[i]);
    const storedBefore = await getEditor(tenant.apiKeyId, ref);
    await expect(runMigration(migration, { deadline: Date.now() + 60_000 })).resolves.toBe('completed');

    expect(after).toBe(false);
    // The room's first edit ('before') is a delta too.
    expect(storedBefore?.deltas).toHaveLength(landed.length + 1);
    const moved = await getEditor(tenant.apiKeyId, { ...ref, documentId: newDocumentId });
    const expected = new Y.Doc();
    Y.applyUpdate(expected, storedBefore!.state);
    for (const delta of storedBefore!.deltas) Y.applyUpdate(expected, delta.update);
    for (const change of landed) Y.applyUpdate(expected, change);
    const actual = await client(tenant, { ...ref, documentId: newDocumentId });
    expect(actual.getText('content').toString()).toBe(expected.getText('content').toString());
    expect(await editorLog(tenant.apiKeyId, { ...ref, documentId: newDocumentId })).toMatchObject({
      items: landed.length + 1,
    });
    expect(moved?.deltas).toHaveLength(landed.length + 1);
  });

  it('unlocks the LOG items when the migration fails: live appends land at the old id again', async () => {
    const { ref, doc, incarnation, send, migration } = await migratingRoom();
    await lockEditorLogs(tenant.apiKeyId, ref.organizationId, ref.documentId, migration.migrationId);
    expect(await append(tenant, ref, incarnation, typed(doc, ' refused'))).toBe(false);
    const undone = new Y.Doc();
    Y.applyUpdate(undone, Y.encodeStateAsUpdate(await client(tenant, ref)));

    let outcome: string | undefined;
    for (let run = 1; run <= MAX_FAILED_RUNS; run += 1) outcome = await recordRunFailure(migration, new Error('down'));

    expect(outcome).toBe('failed');
    expect((await editorLog(tenant.apiKeyId, ref))?.locked).toBeUndefined();
    expect(await append(tenant, ref, incarnation, typed(undone, ' again'))).toBe(true);
    expect(await send(typed(undone, '!'))).toEqual({ statusCode: 200 });
    expect(await text(tenant, ref)).toBe('before again!');
  });
});

/** The LOG item's key of an editor, as shared/db/crdt.ts builds it. */
function logKeyOf(apiKeyId: string, ref: EditorRef) {
  return {
    pk: crdt.crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
    sk: key('E', segment(ref.editorId), 'LOG'),
  };
}
