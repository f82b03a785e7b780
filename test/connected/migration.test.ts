import { marshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { runAsWorker } from '../../local/grant-check';
import { handler as workerHandler } from '../../functions/workers/document-migration';
import * as batch from '../../shared/db/batch';
import { TABLE_NAME, db } from '../../shared/db/client';
import { getMigration, listActiveMigrations, migrationKey, type MigrationRecord } from '../../shared/db/migration';
import { FAILED_MESSAGE, MAX_FAILED_RUNS, runMigration as runMigrationDomain } from '../../shared/domain/migration';
import { documentMigrationWorker, migrationConsumer } from '../../shared/workers';
import { readDocument, seedDocument, SMALL_SEED, type SeedCounts } from '../support/document-seed';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { routeCaller, type Invocation } from '../support/invoke';
import { uniqueId } from '../support/ids';

/** The worker and its run, under the worker's grants (local/grant-check.ts), as the stream worker runs in AWS. */
const worker: typeof workerHandler = (event, context) =>
  runAsWorker(documentMigrationWorker, () => workerHandler(event, context));
const runMigration: typeof runMigrationDomain = (...args) =>
  runAsWorker(documentMigrationWorker, () => runMigrationDomain(...args));

type Headers = Record<string, string>;

const MIGRATE = '/v2/organizations/documents/migrate';
const STATUS = '/v2/organizations/documents/migrate/status';

function expectError(response: Invocation, status: string, httpStatus: number): void {
  expect(response.body.error?.status).toBe(status);
  expect(response.statusCode).toBe(httpStatus);
}

/** The stream record the table writes for the migration item, as Lambda delivers it to the worker. */
async function streamEventFor(
  apiKeyId: string,
  organizationId: string,
  migrationId: string,
): Promise<DynamoDBStreamEvent> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: migrationKey(apiKeyId, organizationId, migrationId),
      ConsistentRead: true,
    }),
  );
  return {
    Records: [
      {
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        dynamodb: {
          NewImage: marshall(Item ?? {}, { removeUndefinedValues: true }) as never,
          SequenceNumber: `seq-${migrationId}`,
        },
      },
    ],
  };
}

/** What readDocument shows for a document id that holds nothing (settings fall back to their defaults). */
const nothing = () => ({
  document: [],
  members: [],
  grants: [[], []],
  settings: [
    { config: { inbox: 'ALL', email: 'ALL' }, metadata: expect.objectContaining({ documentId: '<document>' }) },
  ],
  crdt: [],
  notifications: [],
  feed: [],
  activities: [],
  recordings: [],
});

const context = { getRemainingTimeInMillis: () => 15 * 60 * 1000 } as Context;

async function runWorker(apiKeyId: string, organizationId: string, migrationId: string) {
  return worker(await streamEventFor(apiKeyId, organizationId, migrationId), context);
}

async function migrationOf(apiKeyId: string, organizationId: string, migrationId: string): Promise<MigrationRecord> {
  const migration = await getMigration(apiKeyId, organizationId, migrationId);
  if (migration === undefined) throw new Error('migration not stored');
  return migration;
}

describe('document migration', () => {
  let tenant: Tenant;
  let h: Headers;
  const call = routeCaller(() => h);

  beforeAll(async () => {
    tenant = await newTenant();
    h = tenant.apiKeyHeaders;
  });

  /** A seeded document and a started migration of it to `newDocumentId`. */
  async function started(counts: SeedCounts = SMALL_SEED) {
    const organizationId = uniqueId('org');
    await seedDocument(call, h, organizationId, 'doc-old', counts);
    const response = await call(MIGRATE, { organizationId, documentId: 'doc-old', newDocumentId: 'doc-new' });
    expect(response.statusCode).toBe(200);
    return { organizationId, migrationId: response.body.result?.data.migrationId as string };
  }

  describe('migrate', () => {
    it('starts a pending migration and answers with its id', async () => {
      const organizationId = uniqueId('org');
      await seedDocument(call, h, organizationId, 'd1', { ...SMALL_SEED, editors: 0 });

      const response = await call(MIGRATE, { organizationId, documentId: 'd1', newDocumentId: 'd2' });
      const status = await call(STATUS, { organizationId, migrationId: response.body.result?.data.migrationId });

      expect(response.statusCode).toBe(200);
      expect(response.body.result).toEqual({
        status: 'success',
        message: 'Document migration started.',
        data: { migrationId: expect.stringMatching(/^mig_/) },
      });
      expect(status.body.result).toEqual({
        status: 'success',
        message: 'Migration status retrieved successfully.',
        data: { migrationId: response.body.result?.data.migrationId, status: 'pending' },
      });
    });

    it('returns NOT_FOUND when the document does not exist', async () => {
      const organizationId = uniqueId('org');
      await call('/v2/organizations/documents/add', {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'other' }],
      });

      expectError(
        await call(MIGRATE, { organizationId, documentId: 'missing', newDocumentId: 'new' }),
        'NOT_FOUND',
        404,
      );
      expectError(
        await call(MIGRATE, { organizationId: uniqueId('org'), documentId: 'other', newDocumentId: 'new' }),
        'NOT_FOUND',
        404,
      );
    });

    it('returns ALREADY_EXISTS when a document has the new id', async () => {
      const organizationId = uniqueId('org');
      await call('/v2/organizations/documents/add', {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'a' }, { documentId: 'b' }],
      });

      expectError(await call(MIGRATE, { organizationId, documentId: 'a', newDocumentId: 'b' }), 'ALREADY_EXISTS', 409);
    });

    it('returns FAILED_PRECONDITION when either id is held by a running migration, and writes nothing', async () => {
      const organizationId = uniqueId('org');
      await call('/v2/organizations/documents/add', {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'a' }, { documentId: 'c' }],
      });
      await call(MIGRATE, { organizationId, documentId: 'a', newDocumentId: 'b' });

      const again = await call(MIGRATE, { organizationId, documentId: 'a', newDocumentId: 'x' });
      const intoTarget = await call(MIGRATE, { organizationId, documentId: 'c', newDocumentId: 'b' });

      expectError(again, 'FAILED_PRECONDITION', 400);
      expectError(intoTarget, 'FAILED_PRECONDITION', 400);
      expect(intoTarget.body.error?.message).toBe('Document b is already being migrated.');
      // c is not locked: the refused request took no lock.
      expect(
        (
          await call('/v2/organizations/documents/update', {
            organizationId,
            documents: [{ documentId: 'c', documentName: 'C' }],
          })
        ).statusCode,
      ).toBe(200);
    });

    it.each([
      ['organizationId missing', { documentId: 'a', newDocumentId: 'b' }, 'data.organizationId'],
      ['documentId missing', { organizationId: 'o', newDocumentId: 'b' }, 'data.documentId'],
      ['newDocumentId missing', { organizationId: 'o', documentId: 'a' }, 'data.newDocumentId'],
      ['documentId not a string', { organizationId: 'o', documentId: 7, newDocumentId: 'b' }, 'data.documentId'],
      ['newDocumentId empty', { organizationId: 'o', documentId: 'a', newDocumentId: '' }, 'data.newDocumentId'],
      [
        'newDocumentId too long',
        { organizationId: 'o', documentId: 'a', newDocumentId: 'x'.repeat(257) },
        'data.newDocumentId',
      ],
      ['the same id twice', { organizationId: 'o', documentId: 'a', newDocumentId: 'a' }, 'data.newDocumentId'],
    ])('returns INVALID_ARGUMENT for %s', async (_, data, path) => {
      const response = await call(MIGRATE, data);

      expectError(response, 'INVALID_ARGUMENT', 400);
      expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path)).toContain(path);
    });

    it.each([
      ['migrationId missing', { organizationId: 'o' }],
      ['organizationId missing', { migrationId: 'mig_x' }],
      ['migrationId not a string', { organizationId: 'o', migrationId: ['mig_x'] }],
    ])('status returns INVALID_ARGUMENT for %s', async (_, data) => {
      expectError(await call(STATUS, data), 'INVALID_ARGUMENT', 400);
    });

    it('status returns NOT_FOUND for an unknown id and for an id of another organization', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });

      expectError(await call(STATUS, { organizationId, migrationId: 'mig_unknown' }), 'NOT_FOUND', 404);
      expectError(await call(STATUS, { organizationId: uniqueId('org'), migrationId }), 'NOT_FOUND', 404);
    });
  });

  describe('the worker', () => {
    it('moves everything of the document to the new id and nothing stays under the old one', async () => {
      const organizationId = uniqueId('org');
      await seedDocument(call, h, organizationId, 'doc-old');
      const before = await readDocument(call, h, organizationId, 'doc-old');
      const { body } = await call(MIGRATE, { organizationId, documentId: 'doc-old', newDocumentId: 'doc-new' });
      const migrationId = body.result?.data.migrationId;

      const response = await runWorker(tenant.apiKeyId, organizationId, migrationId);
      const after = await readDocument(call, h, organizationId, 'doc-new');
      const old = await readDocument(call, h, organizationId, 'doc-old');

      expect(response).toEqual({ batchItemFailures: [] });
      expect((await call(STATUS, { organizationId, migrationId })).body.result?.data).toEqual({
        migrationId,
        status: 'completed',
      });
      expect(after).toEqual(before);
      expect(before.members).toHaveLength(3);
      expect(before.activities).toHaveLength(4);
      expect(before.crdt).toHaveLength(2);
      expect(before.feed).toHaveLength(3);
      expect(old).toEqual(nothing());
    });

    it('keeps listings of the organization whole: the same activities, recordings and notifications, now under the new id', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      const list = async (path: string) =>
        (await call(path, { organizationId })).body.result?.data as Array<{ metadata: { documentId: string } }>;
      const before = await Promise.all(['/v2/activities/get', '/v2/recordings/get'].map(list));

      await runWorker(tenant.apiKeyId, organizationId, migrationId);
      const after = await Promise.all(['/v2/activities/get', '/v2/recordings/get'].map(list));

      expect(after.map((items) => items.length)).toEqual(before.map((items) => items.length));
      for (const items of after)
        expect(new Set(items.map((item) => item.metadata.documentId))).toEqual(new Set(['doc-new']));
    });

    it('treats a re-sent immutable activity under the new id as the record it already is', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      await runWorker(tenant.apiKeyId, organizationId, migrationId);

      const resent = await call('/v2/activities/add', {
        organizationId,
        documentId: 'doc-new',
        activities: [
          {
            id: 'act-00000',
            featureType: 'comment',
            actionType: 'comment.add',
            actionUser: { userId: 'member-00000' },
            targetEntityId: 'thread-1',
            entityData: { text: 'comment act-00000' },
          },
        ],
      });

      expect(resent.body.result?.message).toBe('0 activities added; 1 activity already stored unchanged.');
    });

    it('lets writes to both ids through again once the migration has completed', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      await runWorker(tenant.apiKeyId, organizationId, migrationId);

      const renamed = await call('/v2/organizations/documents/update', {
        organizationId,
        documents: [{ documentId: 'doc-new', documentName: 'Renamed' }],
      });
      const oldUpdate = await call('/v2/organizations/documents/update', {
        organizationId,
        documents: [{ documentId: 'doc-old', documentName: 'Ghost' }],
      });
      const reused = await call('/v2/crdt/add', {
        organizationId,
        documentId: 'doc-old',
        editorId: 'e',
        type: 'text',
        data: 'fresh',
      });

      expect(renamed.body.result?.data).toEqual({
        'doc-new': { success: true, id: 'doc-new', message: 'Document updated.' },
      });
      expect(oldUpdate.body.result?.data).toEqual({
        'doc-old': { success: false, id: 'doc-old', message: 'Document does not exist.' },
      });
      expect(reused.statusCode).toBe(200);
    });

    it('finishes a run that crashed half-way with no duplicates and nothing lost', async () => {
      const counts: SeedCounts = {
        members: 150,
        grants: 3,
        notifications: 40,
        activities: 160,
        recordings: 30,
        editors: 1,
        editorBytes: 700 * 1024,
      };
      const organizationId = uniqueId('org');
      await seedDocument(call, h, organizationId, 'doc-old', counts);
      const before = await readDocument(call, h, organizationId, 'doc-old', counts);
      const { body } = await call(MIGRATE, { organizationId, documentId: 'doc-old', newDocumentId: 'doc-new' });
      const migration = await migrationOf(tenant.apiKeyId, organizationId, body.result?.data.migrationId);
      const crash = (moved: number) => {
        if (moved >= 250) throw new Error('worker killed');
      };

      await expect(runMigration(migration, { deadline: Date.now() + 60_000, afterPage: crash })).rejects.toThrow(
        'worker killed',
      );
      const midway = await call(STATUS, { organizationId, migrationId: migration.migrationId });
      const finished = await runMigration(migration, { deadline: Date.now() + 60_000 });

      expect(midway.body.result?.data.status).toBe('in_progress');
      expect(finished).toBe('completed');
      expect(await readDocument(call, h, organizationId, 'doc-new', counts)).toEqual(before);
      expect((await readDocument(call, h, organizationId, 'doc-old', counts)).activities).toEqual([]);
    });

    it('hands the rest to a fresh run when its time is up, and wakes the worker through the stream', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      const migration = await migrationOf(tenant.apiKeyId, organizationId, migrationId);

      const first = await runMigration(migration, { deadline: Date.now() - 1 });
      const { Item } = await db.send(
        new GetCommand({ TableName: TABLE_NAME, Key: migrationKey(tenant.apiKeyId, organizationId, migrationId) }),
      );
      const second = await runMigration(migration, { deadline: Date.now() + 60_000 });

      expect(first).toBe('in_progress');
      expect(Item?.wakeUps).toBe(1);
      expect(second).toBe('completed');
    });

    it('lists a migration among the active ones (what the local stack resumes) until it has ended', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      const active = async () => (await listActiveMigrations(1000)).map((m) => m.migrationId);

      const whileRunning = await active();
      await runWorker(tenant.apiKeyId, organizationId, migrationId);

      expect(whileRunning).toContain(migrationId);
      expect(await active()).not.toContain(migrationId);
    });

    it('does nothing for a record of a migration that has ended, or for any other item', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      const event = await streamEventFor(tenant.apiKeyId, organizationId, migrationId);
      await worker(event, context);
      const completedAt = (await migrationOf(tenant.apiKeyId, organizationId, migrationId)).updatedAt;

      const replay = await worker(event, context);
      const other = await worker(
        {
          Records: [
            { eventName: 'INSERT', dynamodb: { NewImage: marshall({ pk: 'x', sk: 'y', status: 'pending' }) as never } },
          ],
        },
        context,
      );

      expect(replay).toEqual({ batchItemFailures: [] });
      expect(other).toEqual({ batchItemFailures: [] });
      expect((await migrationOf(tenant.apiKeyId, organizationId, migrationId)).updatedAt).toBe(completedAt);
    });

    it('retries a failed run, and after the last one marks the migration failed and releases its locks', async () => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      const failing = jest.spyOn(batch, 'batchWrite').mockRejectedValue(new Error('storage down'));
      let response;
      try {
        // The reader retries the run itself (shared/domain/stream/dispatch.ts), as often as the migration allows.
        response = await runWorker(tenant.apiKeyId, organizationId, migrationId);
      } finally {
        failing.mockRestore();
      }

      const status = await call(STATUS, { organizationId, migrationId });
      const write = await call('/v2/organizations/documents/update', {
        organizationId,
        documents: [{ documentId: 'doc-old', documentName: 'Writable' }],
      });

      expect(migrationConsumer.attempts).toBe(MAX_FAILED_RUNS);
      expect(response).toEqual({ batchItemFailures: [] });
      expect(status.body.result?.data).toEqual({ migrationId, status: 'failed', error: FAILED_MESSAGE });
      expect(JSON.stringify(status.body)).not.toContain('storage down');
      expect(write.statusCode).toBe(200);
    });

    it('resumes a failed migration when it is started again with the same ids', async () => {
      const organizationId = uniqueId('org');
      await seedDocument(call, h, organizationId, 'doc-old', { ...SMALL_SEED, editors: 0 });
      const before = await readDocument(call, h, organizationId, 'doc-old');
      const first = (await call(MIGRATE, { organizationId, documentId: 'doc-old', newDocumentId: 'doc-new' })).body
        .result?.data.migrationId;
      const migration = await migrationOf(tenant.apiKeyId, organizationId, first);
      await expect(
        runMigration(migration, {
          deadline: Date.now() + 60_000,
          afterPage: () => {
            throw new Error('crash');
          },
        }),
      ).rejects.toThrow();
      const failing = jest.spyOn(batch, 'batchWrite').mockRejectedValue(new Error('storage down'));
      try {
        for (let run = 1; run <= MAX_FAILED_RUNS; run += 1) await runWorker(tenant.apiKeyId, organizationId, first);
      } finally {
        failing.mockRestore();
      }

      const second = (await call(MIGRATE, { organizationId, documentId: 'doc-old', newDocumentId: 'doc-new' })).body
        .result?.data.migrationId;
      await runWorker(tenant.apiKeyId, organizationId, second);

      expect((await call(STATUS, { organizationId, migrationId: first })).body.result?.data.status).toBe('failed');
      expect((await call(STATUS, { organizationId, migrationId: second })).body.result?.data.status).toBe('completed');
      expect(await readDocument(call, h, organizationId, 'doc-new')).toEqual(before);
    });
  });

  describe('while a migration runs', () => {
    let organizationId: string;
    let migrationId: string;

    beforeAll(async () => {
      ({ organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 1, editorBytes: 10 }));
    });

    const locked = (documentId: string): Array<[string, string, () => Record<string, unknown>]> => [
      [
        'documents/add',
        '/v2/organizations/documents/add',
        () => ({ organizationId, documents: [{ documentId, documentName: 'x' }] }),
      ],
      [
        'documents/update',
        '/v2/organizations/documents/update',
        () => ({ organizationId, documents: [{ documentId, documentName: 'x' }] }),
      ],
      [
        'disablestate/update',
        '/v2/organizations/documents/access/disablestate/update',
        () => ({ organizationId, documentIds: [documentId], disabled: true }),
      ],
      [
        'users/add',
        '/v2/users/add',
        () => ({ organizationId, documentId, createDocument: true, users: [{ userId: 'newcomer' }] }),
      ],
      [
        'users/update',
        '/v2/users/update',
        () => ({ organizationId, documentId, users: [{ userId: 'member-00000', name: 'Changed' }] }),
      ],
      ['users/delete', '/v2/users/delete', () => ({ organizationId, documentId, userIds: ['member-00000'] })],
      [
        'permissions/add',
        '/v2/auth/permissions/add',
        () => ({
          user: { userId: 'granted-00000' },
          permissions: { resources: [{ type: 'document', id: documentId, organizationId }] },
        }),
      ],
      [
        'permissions/remove',
        '/v2/auth/permissions/remove',
        () => ({
          userId: 'granted-00000',
          permissions: { resources: [{ type: 'document', id: documentId, organizationId }] },
        }),
      ],
      [
        'notifications/add',
        '/v2/notifications/add',
        () => ({
          organizationId,
          documentId,
          createDocument: true,
          actionUser: { userId: 'a' },
          displayHeadlineMessageTemplate: 'x',
          notifyUsers: [{ userId: 'member-00000' }],
        }),
      ],
      ['notifications/delete', '/v2/notifications/delete', () => ({ organizationId, documentId })],
      [
        'notifications/config/set',
        '/v2/notifications/config/set',
        () => ({ organizationId, userIds: ['member-00000'], documentIds: [documentId], config: { email: 'NONE' } }),
      ],
      [
        'activities/add',
        '/v2/activities/add',
        () => ({ organizationId, documentId, activities: [{ featureType: 'comment', actionType: 'comment.add' }] }),
      ],
      [
        'crdt/add',
        '/v2/crdt/add',
        () => ({ organizationId, documentId, editorId: 'another', type: 'text', data: 'x' }),
      ],
      [
        'crdt/update',
        '/v2/crdt/update',
        () => ({ organizationId, documentId, editorId: 'editor-00000', type: 'text', data: 'changed' }),
      ],
      [
        'recordings/add',
        '/v2/recordings/add',
        () => ({ organizationId, documentId, recordings: [{ annotationId: 'rec-00000', displayName: 'x' }] }),
      ],
    ];

    it.each([...locked('doc-old'), ...locked('doc-new')])(
      'refuses %s with FAILED_PRECONDITION and writes nothing',
      async (_, path, data) => {
        const response = await call(path, data());

        expectError(response, 'FAILED_PRECONDITION', 400);
        expect(response.body.error?.message).toMatch(
          /^Document doc-(old|new) is being migrated; writes to it fail until the migration ends\.$/,
        );
      },
    );

    it.each([
      [
        'notifications/update',
        '/v2/notifications/update',
        () => ({ organizationId, notifications: [{ id: 'ntf-00001', readByUserIds: ['member-00000'] }] }),
      ],
      [
        'notifications/delete by id',
        '/v2/notifications/delete',
        () => ({ organizationId, notificationIds: ['ntf-00001'] }),
      ],
      [
        'notifications/delete from a feed',
        '/v2/notifications/delete',
        () => ({ organizationId, userId: 'member-00000', notificationIds: ['ntf-00001'] }),
      ],
      ['users/delete from the organization', '/v2/users/delete', () => ({ organizationId, userIds: ['member-00000'] })],
    ])('refuses %s of the document’s data with FAILED_PRECONDITION', async (_, path, data) => {
      expectError(await call(path, data()), 'FAILED_PRECONDITION', 400);
    });

    it('left the document’s data as it was after all those refused writes', async () => {
      const status = await call(STATUS, { organizationId, migrationId });
      const view = await readDocument(call, h, organizationId, 'doc-old');

      expect(status.body.result?.data.status).toBe('pending');
      expect(view.document).toEqual([
        {
          documentId: '<document>',
          documentName: 'Quarterly plan',
          folderId: 'folder-1',
          accessType: 'restricted',
          disabled: false,
          metadata: { owner: 'jane' },
        },
      ]);
      expect(view.members.map((m) => (m as { userId: string }).userId)).toEqual([
        'member-00000',
        'member-00001',
        'member-00002',
      ]);
      expect(view.notifications).toHaveLength(3);
      expect(view.activities).toHaveLength(4);
      expect((await readDocument(call, h, organizationId, 'doc-new')).crdt).toEqual([]);
    });

    it('still serves reads and writes of other documents', async () => {
      const other = await call('/v2/organizations/documents/add', {
        organizationId,
        documents: [{ documentId: 'unrelated' }],
      });
      const read = await call('/v2/crdt/get', { organizationId, documentId: 'doc-old' });

      expect(other.statusCode).toBe(200);
      expect(read.body.result?.data).toHaveLength(1);
    });
  });

  describe('tenancy', () => {
    const outsiders: Array<[string, () => Promise<Headers>]> = [
      ['another key of the same workspace', () => siblingKey(tenant)],
      ['a key of another workspace', async () => (await newTenant()).apiKeyHeaders],
    ];

    it.each(outsiders)('%s cannot see, start or be blocked by the tenant’s migration', async (_, headersOf) => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 0 });
      const headers = await headersOf();

      const status = await call(STATUS, { organizationId, migrationId }, headers);
      const migrate = await call(
        MIGRATE,
        { organizationId, documentId: 'doc-old', newDocumentId: 'elsewhere' },
        headers,
      );
      const ownWrite = await call(
        '/v2/organizations/documents/add',
        { organizationId, createOrganization: true, documents: [{ documentId: 'doc-old' }] },
        headers,
      );
      const ownMigration = await call(
        MIGRATE,
        { organizationId, documentId: 'doc-old', newDocumentId: 'doc-new' },
        headers,
      );

      expectError(status, 'NOT_FOUND', 404);
      expectError(migrate, 'NOT_FOUND', 404);
      expect(ownWrite.statusCode).toBe(200);
      expect(ownMigration.statusCode).toBe(200);
      expect((await call(STATUS, { organizationId, migrationId })).body.result?.data.status).toBe('pending');
    });

    it.each(outsiders)('%s finds nothing of the tenant under the new id after the migration', async (_, headersOf) => {
      const { organizationId, migrationId } = await started({ ...SMALL_SEED, editors: 1, editorBytes: 10 });
      await runWorker(tenant.apiKeyId, organizationId, migrationId);
      const headers = await headersOf();

      const view = await readDocument(call, headers, organizationId, 'doc-new');

      expect(view).toEqual(nothing());
    });
  });
});
