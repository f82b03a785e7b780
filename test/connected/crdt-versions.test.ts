/**
 * Versions of an editor (decisions §14) through the handlers and the real middleware against DynamoDB Local: create,
 * list (newest first, paged, summaries only), read with /v2/crdt/get `versionId`, restore as one ordinary edit (kept
 * as a `restore` version first, relayed to live connections, live edits racing it kept), delete; authors from live
 * sessions and REST writes; states of the largest stored size intact; the 1,000 bound; bad input and tenancy.
 *
 * @table-stream
 */
import * as Y from 'yjs';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db, dynamodb } from '../../shared/db/client';
import { MAX_STATE_BYTES, createEditor, crdtDocumentPartition, getEditor } from '../../shared/db/crdt';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import {
  MAX_VERSIONS,
  VERSION_CHECK_SHARDS,
  readVersionState,
  scheduleVersionCheck,
  versionChecksDue,
} from '../../shared/db/crdt-versions';
import { keepDueVersions as keepDueVersionsOf } from '../../shared/domain/crdt/auto-versions';
import { handler as versionsConsumerHandler } from '../../shared/domain/stream/crdt-versions';
import { crdtAutoVersionsWorker, crdtVersionsConsumer } from '../../shared/workers';
import { runAsWorker } from '../../local/grant-check';
import { startStreamPoller } from '../../local/stream-poller';
import { startPipeline, startReceiver } from '../support/webhook-pipeline';
import { waitFor } from '../support/wait';
import { config } from '../../shared/core/config';
import { timeOrderedId } from '../../shared/core/ids';
import { key, segment } from '../../shared/db/keys';
import { encodeFrames } from '../../shared/domain/live/framing';
import { readMessage, updateMessage } from '../../shared/domain/live/protocol';
import { editorState, readValue } from '../../shared/domain/crdt/yjs-state';
import { listEditorVersions } from '../../shared/domain/crdt/versions';
import { measureCapacity } from '../support/capacity-meter';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { uniqueId } from '../support/ids';
import { invokeRoute } from '../support/invoke';
import { bytesTo, callSocket, openLiveRoom } from '../support/live-harness';

type Headers = Record<string, string>;

/** A pass of the automatic-versions worker, under its grants. */
const keepDueVersions = (...args: Parameters<typeof keepDueVersionsOf>) =>
  runAsWorker(crdtAutoVersionsWorker, () => keepDueVersionsOf(...args));

describe('versions of an editor', () => {
  let tenant: Tenant;
  let h: Headers;
  let ids: { organizationId: string; documentId: string; editorId: string };

  beforeAll(async () => {
    tenant = await newTenant();
    h = tenant.apiKeyHeaders;
  });

  beforeEach(() => {
    ids = { organizationId: uniqueId('org'), documentId: uniqueId('doc'), editorId: 'body' };
  });

  const call = (path: string, data: unknown, who: Headers = h) => invokeRoute(path, data, { headers: who });
  const create = async (data: Record<string, unknown> = {}, who: Headers = h) =>
    call('/v2/crdt/versions/create', { ...ids, ...data }, who);
  const created = async (data: Record<string, unknown> = {}) => {
    const answer = await create(data);
    expect(answer.statusCode).toBe(200);
    return answer.body.result?.data as { versionId: string; kind: string; authors: string[]; size: number };
  };
  const list = async (data: Record<string, unknown> = {}) => {
    const answer = await call('/v2/crdt/versions/get', { ...ids, ...data });
    expect(answer.statusCode).toBe(200);
    return answer.body.result as {
      data: Array<{ versionId: string; kind: string; name?: string; authors: string[] }>;
      pageToken?: string;
    };
  };
  const content = async (data: Record<string, unknown> = {}) => {
    const answer = await call('/v2/crdt/get', { ...ids, ...data });
    expect(answer.statusCode).toBe(200);
    return answer.body.result?.data[0]?.data;
  };
  const setText = (text: string, userId?: string) =>
    call('/v2/crdt/update', { ...ids, type: 'text', data: text, ...(userId === undefined ? {} : { userId }) });

  describe('create, list and read', () => {
    it('keeps a manual version with its summary and reads the editor as it was at it', async () => {
      await call('/v2/crdt/add', { ...ids, type: 'text', data: 'first draft' });
      const before = Date.now();

      const answer = await create({ name: 'Draft 1', userId: 'ann' });
      await setText('second draft');

      expect(answer.body.result?.message).toBe('Version created.');
      const version = answer.body.result?.data;
      expect(version).toEqual({
        versionId: expect.stringMatching(/^ver_[0-9A-Z]{26}$/),
        editorId: 'body',
        kind: 'manual',
        name: 'Draft 1',
        createdAt: expect.any(Number),
        authors: [],
        size: expect.any(Number),
      });
      expect(version.createdAt).toBeGreaterThanOrEqual(before);
      expect(await content({ versionId: version.versionId })).toBe('first draft');
      expect(await content()).toBe('second draft');
      const yjs = await call('/v2/crdt/get', { ...ids, versionId: version.versionId, format: 'yjs' });
      const state = Buffer.from(yjs.body.result?.data[0].state, 'base64');
      expect(state.length).toBe(version.size);
      expect(readValue(state, 'text', 'content')).toBe('first draft');
    });

    it('reads an xml editor at a version in the readable formats', async () => {
      await call('/v2/crdt/add', { ...ids, type: 'xml', format: 'markdown', content: '# Title\n\nOld text.\n' });
      const { versionId } = await created();
      await call('/v2/crdt/update', { ...ids, format: 'markdown', content: '# Title\n\nNew text.\n' });

      expect(await content({ versionId, format: 'markdown' })).toBe('# Title\n\nOld text.');
      expect(await content({ versionId, format: 'html' })).toBe('<h1>Title</h1><p>Old text.</p>');
      expect(await content({ format: 'markdown' })).toBe('# Title\n\nNew text.');
    });

    it('lists versions newest first, paged, reading summaries only (a page of 20 within 5 read units)', async () => {
      await call('/v2/crdt/add', { ...ids, type: 'text', data: 'x'.repeat(200_000) });
      const made: string[] = [];
      for (let i = 0; i < 22; i += 1) made.push((await created({ name: `v${i}` })).versionId);

      const first = await list({ pageSize: 20 });
      const second = await list({ pageSize: 20, pageToken: first.pageToken });

      expect(first.data.map((v) => v.versionId)).toEqual(made.slice(2).reverse());
      expect(second.data.map((v) => v.versionId)).toEqual(made.slice(0, 2).reverse());
      expect(second.pageToken).toBeUndefined();
      expect((await list()).data).toHaveLength(20);
      const measured = await measureCapacity(dynamodb, () =>
        listEditorVersions(tenant.apiKeyId, { ...ids, pageSize: 20 }),
      );
      expect(measured.value.versions).toHaveLength(20);
      expect(measured.capacity.read).toBeLessThanOrEqual(5);
    });

    it('lists an editor without versions as an empty page', async () => {
      await call('/v2/crdt/add', { ...ids, type: 'map', data: { a: 1 } });

      expect((await list()).data).toEqual([]);
    });
  });

  describe('authors', () => {
    it('are the users of live sessions that wrote and the userId of REST writes since the version before', async () => {
      const room = await openLiveRoom(tenant);
      ids = room.ids;
      const ann = await room.open('ann');
      const doc = new Y.Doc();
      doc.getText('content').insert(0, 'typed live');
      await callSocket('$default', ann, { body: encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc)), 'a1')[0] });
      await call('/v2/crdt/update', { ...ids, yjsUpdate: updateOf('!', doc), userId: 'carl' });
      await call('/v2/crdt/update', { ...ids, yjsUpdate: updateOf('?', doc) });

      const first = await created();
      const unchanged = await created();
      await setText('by dora', 'dora');
      const third = await created();

      expect(first.authors).toEqual(['ann', 'carl']);
      expect(unchanged.authors).toEqual([]);
      expect(third.authors).toEqual(['dora']);
    });
  });

  describe('restore', () => {
    it('makes the content equal to the version by one edit, after keeping the state before as a restore version', async () => {
      await call('/v2/crdt/add', { ...ids, type: 'map', data: { title: 'Plan', items: [1, 2], owner: 'ann' } });
      const { versionId } = await created({ name: 'good' });
      await call('/v2/crdt/update', { ...ids, data: { title: 'Plan B', items: [1, 2, 3], extra: true } });
      const headBefore = (await getEditor(tenant.apiKeyId, ids))!;

      const answer = await call('/v2/crdt/versions/restore', { ...ids, versionId, userId: 'eve' });

      expect(answer.statusCode).toBe(200);
      expect(answer.body.result?.message).toBe('Version restored.');
      const restored = answer.body.result?.data as { versionId: string; restoredVersionId: string };
      expect(restored.restoredVersionId).toBe(versionId);
      expect(await content()).toEqual({ title: 'Plan', items: [1, 2], owner: 'ann' });
      expect(await content({ versionId: restored.versionId })).toEqual({
        title: 'Plan B',
        items: [1, 2, 3],
        extra: true,
      });
      const versions = (await list()).data;
      expect(versions.map((v) => [v.versionId, v.kind])).toEqual([
        [restored.versionId, 'restore'],
        [versionId, 'manual'],
      ]);
      // An edit, not a replacement: the state before is contained in the state after (nothing of it was dropped).
      const after = (await getEditor(tenant.apiKeyId, ids))!;
      const sv = Y.encodeStateVectorFromUpdate(editorState(after));
      const beforeSv = Y.decodeStateVector(Y.encodeStateVectorFromUpdate(editorState(headBefore)));
      const afterSv = Y.decodeStateVector(sv);
      for (const [client, clock] of beforeSv) expect(afterSv.get(client)).toBeGreaterThanOrEqual(clock);
      expect(after.lastUpdatedBy).toBe('eve');
    });

    it('restores an xml editor keeping the Yjs items of blocks that did not change', async () => {
      await call('/v2/crdt/add', {
        ...ids,
        type: 'xml',
        format: 'markdown',
        content: '# Keep\n\nSame paragraph.\n\nOld ending.\n',
      });
      const { versionId } = await created();
      await call('/v2/crdt/update', {
        ...ids,
        format: 'markdown',
        content: '# Keep\n\nSame paragraph.\n\nNew ending.\n',
      });
      const before = new Y.Doc();
      Y.applyUpdate(before, editorState((await getEditor(tenant.apiKeyId, ids))!));
      const kept = Y.createRelativePositionFromTypeIndex(before.getXmlFragment('content').get(1) as Y.XmlElement, 0);

      await call('/v2/crdt/versions/restore', { ...ids, versionId });

      expect(await content({ format: 'markdown' })).toBe('# Keep\n\nSame paragraph.\n\nOld ending.');
      const after = new Y.Doc();
      Y.applyUpdate(after, editorState((await getEditor(tenant.apiKeyId, ids))!));
      const position = Y.createAbsolutePositionFromRelativePosition(kept, after);
      expect(position?.type).toBe(after.getXmlFragment('content').get(1));
    });

    it('reaches open live connections as an ordinary update', async () => {
      const room = await openLiveRoom(tenant);
      ids = room.ids;
      const bob = await room.open('bob');
      await setText('version text');
      const { versionId } = await created();
      await setText('later text');
      const client = new Y.Doc();
      Y.applyUpdate(client, editorState((await getEditor(tenant.apiKeyId, ids))!));

      await call('/v2/crdt/versions/restore', { ...ids, versionId });

      const updates = bytesTo(bob)
        .map(readMessage)
        .filter((message) => message.kind === 'update');
      Y.applyUpdate(client, (updates[updates.length - 1] as { update: Uint8Array }).update);
      expect(client.getText('content').toString()).toBe('version text');
    });

    it('never loses live edits: two clients typing during the restore keep every keystroke in the content or the restore version', async () => {
      const room = await openLiveRoom(tenant);
      ids = room.ids;
      const ann = await room.open('ann');
      const bob = await room.open('bob');
      await setText('0123456789');
      const { versionId } = await created();
      await setText('abcdefghij');
      const base = editorState((await getEditor(tenant.apiKeyId, ids))!);
      const typist = (name: string, connectionId: string) => {
        const doc = new Y.Doc();
        Y.applyUpdate(doc, base);
        const text = doc.getText('content');
        return async (count: number, tag: string) => {
          for (let i = 0; i < count; i += 1) {
            const sv = Y.encodeStateVector(doc);
            text.insert(text.length, `<${name}${tag}${i}>`);
            const update = Y.encodeStateAsUpdate(doc, sv);
            await callSocket('$default', connectionId, {
              body: encodeFrames(updateMessage(update), `${name}${tag}${i}`)[0],
            });
          }
        };
      };
      const annTypes = typist('ann', ann);
      const bobTypes = typist('bob', bob);

      const [restore] = await Promise.all([
        call('/v2/crdt/versions/restore', { ...ids, versionId }),
        annTypes(8, 'd'),
        bobTypes(8, 'd'),
      ]);
      await Promise.all([annTypes(3, 'a'), bobTypes(3, 'a')]);

      expect(restore.statusCode).toBe(200);
      const kept = String(await content({ versionId: restore.body.result?.data.versionId }));
      const now = String(await content());
      for (const name of ['ann', 'bob']) {
        for (let i = 0; i < 8; i += 1) expect(`${now} ${kept}`).toContain(`<${name}d${i}>`);
        for (let i = 0; i < 3; i += 1) expect(now).toContain(`<${name}a${i}>`);
      }
      // The restored content is there, with the edits the restore did not see.
      expect(now.replace(/<[a-z]+[da]\d>/g, '')).toBe('0123456789');
    });
  });

  describe('largest stored states', () => {
    it('creates, reads and restores a version of an editor near the largest state intact', async () => {
      const doc = new Y.Doc();
      const big = Buffer.from(Array.from({ length: MAX_STATE_BYTES - 200_000 }, (_, i) => 65 + (i % 26))).toString(
        'latin1',
      );
      doc.getText('content').insert(0, big);
      const state = Y.encodeStateAsUpdate(doc);
      expect(state.length).toBeGreaterThan(2.5 * 1024 * 1024);
      await createEditor(tenant.apiKeyId, {
        ...ids,
        type: 'text',
        contentKey: 'content',
        state,
        lastUpdate: new Date().toISOString(),
        lastUpdatedBy: null,
      });

      const { versionId, size } = await created();
      await setText('small now');
      const read = await call('/v2/crdt/get', { ...ids, versionId });
      const restore = await call('/v2/crdt/versions/restore', { ...ids, versionId });

      expect(size).toBe(state.length);
      expect(read.body.result?.data[0].data === big).toBe(true);
      const kept = await readVersionState(tenant.apiKeyId, ids, { versionId, size });
      expect(Buffer.from(kept!).equals(Buffer.from(state))).toBe(true);
      expect(restore.statusCode).toBe(200);
      expect(readValue(editorState((await getEditor(tenant.apiKeyId, ids))!), 'text', 'content')).toBe(big);
    });
  });

  describe('delete and the bound', () => {
    it('deletes a version: it is no longer listed or readable', async () => {
      await call('/v2/crdt/add', { ...ids, type: 'text', data: 'a' });
      const { versionId } = await created();

      const answer = await call('/v2/crdt/versions/delete', { ...ids, versionId });

      expect(answer.body.result).toEqual({
        status: 'success',
        message: 'Version deleted.',
        data: { versionId, deleted: true },
      });
      expect((await list()).data).toEqual([]);
      const read = await call('/v2/crdt/get', { ...ids, versionId });
      expect(read.body.error).toMatchObject({ status: 'NOT_FOUND', message: 'Version not found.' });
      const again = await call('/v2/crdt/versions/delete', { ...ids, versionId });
      expect(again.body.error).toMatchObject({ status: 'NOT_FOUND', message: 'Version not found.' });
    });

    it(`keeps at most ${MAX_VERSIONS} versions: the oldest automatic one goes, and with none create is refused`, async () => {
      await call('/v2/crdt/add', { ...ids, type: 'text', data: 'a' });
      const partition = crdtDocumentPartition(tenant.apiKeyId, ids.organizationId, ids.documentId);
      const start = Date.now() - 10_000_000;
      const fake = Array.from({ length: MAX_VERSIONS }, (_, i) => {
        const versionId = timeOrderedId('ver_', start + i);
        return {
          pk: partition,
          sk: key('V', segment(ids.editorId), 'S', versionId),
          versionId,
          editorId: ids.editorId,
          kind: i === 5 || i === 9 ? 'auto' : 'manual',
          createdAt: start + i,
          authors: [],
          size: 0,
        };
      });
      for (let i = 0; i < fake.length; i += 25)
        await db.send(
          new BatchWriteCommand({
            RequestItems: { [TABLE_NAME]: fake.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
          }),
        );

      // The count as creates keep it (with 4 more than there are: expired automatic versions leave it so).
      await db.send(
        new PutCommand({
          TableName: TABLE_NAME,
          Item: { pk: partition, sk: key('V', segment(ids.editorId), 'COUNT'), versions: MAX_VERSIONS + 4 },
        }),
      );
      const first = await create();
      const second = await create();
      const third = await create();

      expect(first.statusCode).toBe(200);
      expect(second.statusCode).toBe(200);
      expect(third.body.error).toMatchObject({
        status: 'RESOURCE_EXHAUSTED',
        message: 'An editor keeps at most 1,000 versions.',
      });
      const read = await call('/v2/crdt/get', { ...ids, versionId: fake[5].versionId });
      expect(read.body.error).toMatchObject({ status: 'NOT_FOUND' });
    }, 120_000);
  });

  describe('automatic versions and events', () => {
    const times = { quietMs: 1000, maxMs: 60_000 };
    const checkOf = async () => {
      const found = [];
      for (let shard = 0; shard < VERSION_CHECK_SHARDS; shard += 1)
        found.push(...(await versionChecksDue(shard, Date.now() + 86_400_000, 1000)));
      return found.find((check) => check.ref.documentId === ids.documentId);
    };

    it('keeps one once the editor has been quiet long enough, never one of an unchanged editor, and one after the maximum age while edits go on', async () => {
      const stream = await startStreamPoller({
        endpoint: process.env.DYNAMODB_ENDPOINT as string,
        tableName: process.env.TABLE_NAME as string,
        idleMs: 50,
        workers: [
          {
            worker: crdtVersionsConsumer,
            handler: (event: DynamoDBStreamEvent) =>
              runAsWorker(crdtVersionsConsumer, () => versionsConsumerHandler(event)),
          },
        ],
      });
      try {
        await call('/v2/crdt/add', { ...ids, type: 'text', data: 'a' });
        await setText('ab', 'ann');
        await waitFor(async () => (await checkOf()) !== undefined, { what: "the editor's version check" });
        const changedAt = Date.now();

        const early = await keepDueVersions(changedAt, times);
        // The reader wrote the check due after the configured quiet period; the pass runs past it with its own times.
        const due = await keepDueVersions(changedAt + config.crdtVersionQuietMs + 1000, times);
        const versions = (await list()).data;
        // Nothing changed since: a check written again (a record handed twice) keeps nothing.
        await scheduleVersionCheck(tenant.apiKeyId, ids, changedAt);
        const unchanged = await keepDueVersions(changedAt + 10_000, times);

        expect(early.kept).toBe(0);
        expect(due.kept).toBe(1);
        expect(versions).toEqual([expect.objectContaining({ kind: 'auto', authors: ['ann'] })]);
        expect(unchanged).toMatchObject({ kept: 0, cleared: 1 });
        expect((await list()).data).toHaveLength(1);
        expect(await checkOf()).toBeUndefined();

        // Edits that go on: never quiet, so the maximum age decides.
        await setText('abc', 'bob');
        await waitFor(async () => (await checkOf()) !== undefined, { what: 'the next version check' });
        const going = await keepDueVersions(Date.now() + config.crdtVersionQuietMs + 50, {
          quietMs: 3_600_000,
          maxMs: 10,
        });
        expect(going.kept).toBe(1);
        // (Ordered by the pass's `now`, which this test moves ahead of the clock: compared as a set.)
        expect((await list()).data.map((v) => `${v.kind}:${v.authors.join()}`).sort()).toEqual([
          'auto:ann',
          'auto:bob',
        ]);
      } finally {
        await stream.stop();
      }
    });

    it('raises crdt.version_created for every kind and crdt.version_restored after the restore', async () => {
      const pipeline = await startPipeline();
      const hook = await startReceiver();
      try {
        const owner = await newTenant();
        const who = owner.apiKeyHeaders;
        await call('/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, who);
        await call(
          '/v2/workspace/advancedwebhook/endpoints/create',
          { url: hook.url, filterTypes: ['crdt.version_created', 'crdt.version_restored'] },
          who,
        );
        await call('/v2/crdt/add', { ...ids, type: 'text', data: 'one' }, who);
        const made = await call('/v2/crdt/versions/create', { ...ids, name: 'One' }, who);
        const versionId = made.body.result?.data.versionId;
        await call('/v2/crdt/update', { ...ids, type: 'text', data: 'two', userId: 'cy' }, who);
        const restored = await call('/v2/crdt/versions/restore', { ...ids, versionId }, who);

        const events = () =>
          hook.requests.map((request) => JSON.parse(request.body) as { type: string; data: Record<string, unknown> });
        await waitFor(() => events().length >= 3, { what: 'the version events' });
        const restoreVersionId = restored.body.result?.data.versionId;
        expect(
          events()
            .map((e) => [e.type, e.data.versionId])
            .sort(),
        ).toEqual(
          [
            ['crdt.version_created', versionId],
            ['crdt.version_created', restoreVersionId],
            ['crdt.version_restored', restoreVersionId],
          ].sort(),
        );
        expect(events().find((e) => e.type === 'crdt.version_restored')?.data).toEqual({
          organizationId: ids.organizationId,
          documentId: ids.documentId,
          editorId: 'body',
          versionId: restoreVersionId,
          kind: 'restore',
          authors: ['cy'],
          createdAt: expect.any(Number),
          restoredVersionId: versionId,
        });
        expect(events().find((e) => e.data.versionId === versionId)?.data).toMatchObject({
          kind: 'manual',
          name: 'One',
        });
      } finally {
        await pipeline.stop();
        await hook.close();
      }
    });
  });

  describe('document migration', () => {
    it('carries the versions to the new document id', async () => {
      const pipeline = await startPipeline();
      try {
        await call('/v2/crdt/add', { ...ids, type: 'text', data: 'kept' });
        const { versionId } = await created({ name: 'Before the move' });
        await setText('changed');
        const started = await call('/v2/organizations/documents/migrate', {
          organizationId: ids.organizationId,
          documentId: ids.documentId,
          newDocumentId: `${ids.documentId}-new`,
        });
        const migrationId = started.body.result?.data.migrationId;
        await waitFor(
          async () =>
            (
              await call('/v2/organizations/documents/migrate/status', {
                organizationId: ids.organizationId,
                migrationId,
              })
            ).body.result?.data.status === 'completed',
          { what: 'the migration' },
        );
        const moved = { ...ids, documentId: `${ids.documentId}-new` };

        const listed = await call('/v2/crdt/versions/get', moved);
        const read = await call('/v2/crdt/get', { ...moved, versionId });
        const atOld = await call('/v2/crdt/versions/get', ids);

        expect(listed.body.result?.data).toEqual([expect.objectContaining({ versionId, name: 'Before the move' })]);
        expect(read.body.result?.data[0].data).toBe('kept');
        expect(atOld.body.error?.status).toBe('NOT_FOUND');
      } finally {
        await pipeline.stop();
      }
    });
  });

  describe('bad input writes nothing and says what is wrong', () => {
    beforeEach(async () => {
      await call('/v2/crdt/add', { ...ids, type: 'text', data: 'a' });
    });

    it.each([
      ['a name over 200 characters', '/v2/crdt/versions/create', { name: 'n'.repeat(201) }],
      ['an empty name', '/v2/crdt/versions/create', { name: '' }],
      ['a name of the wrong type', '/v2/crdt/versions/create', { name: 5 }],
      ['a userId of the wrong type', '/v2/crdt/versions/create', { userId: ['ann'] }],
      ['a page size of 0', '/v2/crdt/versions/get', { pageSize: 0 }],
      ['a page size over 100', '/v2/crdt/versions/get', { pageSize: 101 }],
      ['a page token that is not one', '/v2/crdt/versions/get', { pageToken: 'nope' }],
      ['no versionId', '/v2/crdt/versions/restore', {}],
      ['a versionId of the wrong type', '/v2/crdt/versions/restore', { versionId: 7 }],
      ['a versionId of the wrong type', '/v2/crdt/versions/delete', { versionId: { id: 'x' } }],
      ['a versionId of the wrong type', '/v2/crdt/get', { versionId: 7 }],
    ])('refuses %s (%s) with INVALID_ARGUMENT', async (_what, path, data) => {
      const answer = await call(path, { ...ids, ...data });

      expect(answer.statusCode).toBe(400);
      expect(answer.body.error?.status).toBe('INVALID_ARGUMENT');
      expect((await list()).data).toEqual([]);
    });

    it('asks for editorId with versionId on get', async () => {
      const { versionId } = await created();
      const answer = await call('/v2/crdt/get', {
        organizationId: ids.organizationId,
        documentId: ids.documentId,
        versionId,
      });

      expect(answer.body.error).toMatchObject({
        status: 'INVALID_ARGUMENT',
        message: 'editorId is required with versionId.',
      });
    });

    it.each([['/v2/crdt/versions/restore'], ['/v2/crdt/versions/delete'], ['/v2/crdt/get']])(
      'answers NOT_FOUND Version not found. for unknown versions on %s',
      async (path) => {
        const { versionId } = await created();
        const unknown = [timeOrderedId('ver_'), 'ver_nope', 'something'];
        // A version of another editor of the same document is unknown to this one.
        await call('/v2/crdt/add', { ...ids, editorId: 'other', type: 'text', data: 'b' });

        for (const id of unknown) {
          const answer = await call(path, { ...ids, versionId: id });
          expect(answer.body.error).toEqual({ status: 'NOT_FOUND', message: 'Version not found.' });
        }
        const ofOther = await call(path, { ...ids, editorId: 'other', versionId });
        expect(ofOther.body.error).toEqual({ status: 'NOT_FOUND', message: 'Version not found.' });
        expect(await content()).toBe('a');
        expect((await list()).data).toHaveLength(1);
      },
    );

    it('answers NOT_FOUND for an unknown editor, document or organization', async () => {
      for (const other of [{ editorId: 'nope' }, { documentId: 'nope' }, { organizationId: 'nope' }]) {
        const made = await create(other);
        const listed = await call('/v2/crdt/versions/get', { ...ids, ...other });
        expect(made.body.error).toEqual({ status: 'NOT_FOUND', message: 'Editor not found.' });
        expect(listed.body.error).toEqual({ status: 'NOT_FOUND', message: 'Editor not found.' });
      }
    });
  });

  describe('tenancy', () => {
    it('another API key of the same or of another workspace can neither read, create, restore nor delete', async () => {
      await call('/v2/crdt/add', { ...ids, type: 'text', data: 'mine' });
      const { versionId } = await created();
      const sibling = await siblingKey(tenant);
      const stranger = (await newTenant()).apiKeyHeaders;

      for (const who of [sibling, stranger]) {
        expect((await create({}, who)).body.error).toEqual({ status: 'NOT_FOUND', message: 'Editor not found.' });
        expect((await call('/v2/crdt/versions/get', ids, who)).body.error?.status).toBe('NOT_FOUND');
        for (const path of ['/v2/crdt/get', '/v2/crdt/versions/restore', '/v2/crdt/versions/delete']) {
          const answer = await call(path, { ...ids, versionId }, who);
          expect(answer.body.error).toEqual({ status: 'NOT_FOUND', message: 'Version not found.' });
        }
      }
      expect((await list()).data.map((v) => v.versionId)).toEqual([versionId]);
      expect(await content()).toBe('mine');
    });
  });
});

/** A Yjs update appending `text` to the client doc's text, as a base64 string. */
function updateOf(text: string, doc: Y.Doc): string {
  const sv = Y.encodeStateVector(doc);
  const t = doc.getText('content');
  t.insert(t.length, text);
  return Buffer.from(Y.encodeStateAsUpdate(doc, sv)).toString('base64');
}
