/**
 * Document migrations and the locks they hold (O = T#<key>#ORG#<org>):
 *
 *   pk O   sk MIGRATION#<id>             the migration: ids, status, error, attempts, timestamps
 *      gsi1 (while pending or in progress): SYSTEM#MIGRATIONS#ACTIVE / <createdAt>#<key>#<id>
 *   pk O   sk MIGRATION#<id>#PROGRESS    the worker's checkpoint: source index, cursor, items moved
 *   pk O#LOCK#<d>   sk LOCK             a lock on a document id, held by one migration: one partition per document
 *
 * Migrate writes the migration and the locks of both document ids in one transaction, so two migrations never
 * hold the same document and a write that checks a lock in its own transaction (shared/domain/document-locks.ts)
 * either commits before the migration starts or fails. Every write to a document's data checks its lock, so the
 * lock is read as often as the document is written: it has a partition of its own per document (not a sort key in
 * the organization's partition, which made one organization's writes share one partition's 1,000 WCU / 3,000 RCU,
 * and made writes to different documents of an organization conflict as transactions on one partition). The checkpoint is an item of its own: the table's stream
 * wakes the worker for the migration item only (`recordType`), so saving progress does not wake it again.
 *
 * The active index is the operator's view across tenants (stuck migrations) and how the local stack resumes the
 * migrations that were running when it stopped; nothing in a request reads it.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, type Item, type ItemKey } from './batch';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, segment, sortableNumber } from './keys';
import { organizationPartition } from './organization';
import { FailedPreconditionError } from '../core/errors';
import { named, type TransactItem } from './transact';
import { MIGRATION_RECORD_TYPE } from '../workers';

export const MIGRATION_STATUSES = ['pending', 'in_progress', 'completed', 'failed'] as const;
export type MigrationStatus = (typeof MIGRATION_STATUSES)[number];

/** Marks the migration item among stream records (the worker's event filter matches it). */

export interface MigrationRecord {
  apiKeyId: string;
  organizationId: string;
  migrationId: string;
  documentId: string;
  newDocumentId: string;
  status: MigrationStatus;
  /** Set when the status is `failed`. */
  error?: string;
  /** Runs of the worker that ended in an error. */
  attempts: number;
  createdAt: number;
  updatedAt: number;
}

/** Where the worker continues: the source it was moving and the query position inside it. */
export interface MigrationProgress {
  source: number;
  cursor?: Record<string, unknown>;
  moved: number;
}

const ACTIVE_PARTITION = key('SYSTEM', 'MIGRATIONS', 'ACTIVE');

export const migrationKey = (apiKeyId: string, organizationId: string, migrationId: string): ItemKey => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: key('MIGRATION', segment(migrationId)),
});
const progressKey = (apiKeyId: string, organizationId: string, migrationId: string): ItemKey => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: key('MIGRATION', segment(migrationId), 'PROGRESS'),
});
/** The lock of a document id: its own partition, so checks of it spread with the documents (see the module comment). */
export const documentLockKey = (apiKeyId: string, organizationId: string, documentId: string): ItemKey => ({
  pk: key(organizationPartition(apiKeyId, organizationId), 'LOCK', segment(documentId)),
  sk: 'LOCK',
});

const keyOf = (migration: MigrationRecord) =>
  migrationKey(migration.apiKeyId, migration.organizationId, migration.migrationId);
const progressKeyOf = (migration: MigrationRecord) =>
  progressKey(migration.apiKeyId, migration.organizationId, migration.migrationId);

function toMigration(item: Item): MigrationRecord {
  return {
    apiKeyId: String(item.apiKeyId),
    organizationId: String(item.organizationId),
    migrationId: String(item.migrationId),
    documentId: String(item.documentId),
    newDocumentId: String(item.newDocumentId),
    status: item.status as MigrationStatus,
    ...(typeof item.error === 'string' ? { error: item.error } : {}),
    attempts: Number(item.attempts ?? 0),
    createdAt: Number(item.createdAt),
    updatedAt: Number(item.updatedAt),
  };
}

/** The migration an item (from the table or a stream image) holds, or undefined when it is another item. */
export function migrationFromItem(item: Item | undefined): MigrationRecord | undefined {
  return item?.recordType === MIGRATION_RECORD_TYPE ? toMigration(item) : undefined;
}

function lockItem(apiKeyId: string, migration: MigrationRecord, documentId: string): TransactItem {
  return named(
    {
      Put: {
        TableName: TABLE_NAME,
        Item: {
          ...documentLockKey(apiKeyId, migration.organizationId, documentId),
          migrationId: migration.migrationId,
          documentId,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    () => new FailedPreconditionError(`Document ${documentId} is already being migrated.`),
  );
}

/**
 * The writes that start a migration: the locks of both document ids (each failing with FailedPreconditionError
 * when another migration holds it) and the pending migration.
 */
export function startMigrationItems(migration: MigrationRecord): TransactItem[] {
  const { apiKeyId } = migration;
  return [
    lockItem(apiKeyId, migration, migration.documentId),
    lockItem(apiKeyId, migration, migration.newDocumentId),
    {
      Put: {
        TableName: TABLE_NAME,
        Item: {
          ...keyOf(migration),
          ...migration,
          recordType: MIGRATION_RECORD_TYPE,
          gsi1pk: ACTIVE_PARTITION,
          gsi1sk: key(sortableNumber(migration.createdAt), segment(apiKeyId), segment(migration.migrationId)),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

export async function getMigration(
  apiKeyId: string,
  organizationId: string,
  migrationId: string,
): Promise<MigrationRecord | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: migrationKey(apiKeyId, organizationId, migrationId),
      ConsistentRead: true,
    }),
  );
  return migrationFromItem(Item);
}

/** What a write to a document a migration holds answers (docs/decisions.md §5). */
export function migratingError(documentId: string): FailedPreconditionError {
  return new FailedPreconditionError(
    `Document ${documentId} is being migrated; writes to it fail until the migration ends.`,
  );
}

/** Checks, inside a transaction, that no migration holds the document id (failing with migratingError if one does). */
export function documentUnlockedItem(apiKeyId: string, organizationId: string, documentId: string): TransactItem {
  return named(
    {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: documentLockKey(apiKeyId, organizationId, documentId),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    () => migratingError(documentId),
  );
}

/** The document ids among `documentIds` that a migration holds (one consistent BatchGet per 100, 1 RCU per id). */
export async function lockedDocuments(
  apiKeyId: string,
  organizationId: string,
  documentIds: readonly string[],
): Promise<string[]> {
  const items = await batchGet(documentIds.map((documentId) => documentLockKey(apiKeyId, organizationId, documentId)));
  return items.map((item) => String(item.documentId));
}

/**
 * Moves a pending migration to `in_progress`; true when it is (now or already) in progress, false when it has
 * ended. Writes only on the first move: every write of the migration item wakes the worker through the stream.
 */
export async function markInProgress(migration: MigrationRecord, now: number): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: keyOf(migration),
        UpdateExpression: 'SET #status = :running, updatedAt = :now',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pending': 'pending', ':running': 'in_progress', ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return error.Item?.status?.S === 'in_progress';
    throw error;
  }
}

/**
 * Wakes the worker through the stream (a MODIFY of the migration item that passes its event filter): when a run
 * stops before the end of its time, so a migration of any size goes on in fresh invocations, and when the local
 * stack restarts with migrations still running. Does nothing to a migration that has ended.
 */
export async function wakeMigration(migration: MigrationRecord, now: number): Promise<void> {
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: keyOf(migration),
        UpdateExpression: 'ADD wakeUps :one SET updatedAt = :now',
        ConditionExpression: '#status IN (:pending, :running)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':one': 1, ':now': now, ':pending': 'pending', ':running': 'in_progress' },
      }),
    ),
  );
}

/** Counts a failed run and keeps its error; returns how many runs have failed so far. */
export async function recordFailedRun(migration: MigrationRecord, message: string, now: number): Promise<number> {
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: keyOf(migration),
      UpdateExpression: 'ADD attempts :one SET lastError = :message, updatedAt = :now',
      ExpressionAttributeValues: { ':one': 1, ':message': message, ':now': now },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(Attributes?.attempts ?? 1);
}

/**
 * The writes that end a migration: both locks released and the final status set (with `error` when failed), the
 * migration leaving the active index. The status update fails its condition when the migration already ended.
 */
export function finishMigrationItems(
  migration: MigrationRecord,
  outcome: { status: 'completed' } | { status: 'failed'; error: string },
  now: number,
): TransactItem[] {
  const { apiKeyId, organizationId } = migration;
  const values: Record<string, unknown> = {
    ':status': outcome.status,
    ':now': now,
    ':pending': 'pending',
    ':running': 'in_progress',
  };
  let update = 'SET #status = :status, updatedAt = :now';
  if (outcome.status === 'failed') {
    update += ', #error = :error';
    values[':error'] = outcome.error;
  }
  return [
    { Delete: { TableName: TABLE_NAME, Key: documentLockKey(apiKeyId, organizationId, migration.documentId) } },
    { Delete: { TableName: TABLE_NAME, Key: documentLockKey(apiKeyId, organizationId, migration.newDocumentId) } },
    { Delete: { TableName: TABLE_NAME, Key: progressKeyOf(migration) } },
    named(
      {
        Update: {
          TableName: TABLE_NAME,
          Key: keyOf(migration),
          UpdateExpression: `${update} REMOVE gsi1pk, gsi1sk`,
          ConditionExpression: '#status IN (:pending, :running)',
          ExpressionAttributeNames: {
            '#status': 'status',
            ...(outcome.status === 'failed' ? { '#error': 'error' } : {}),
          },
          ExpressionAttributeValues: values,
        },
      },
      () => new MigrationEndedError(),
    ),
  ];
}

/** The migration had already ended (another run finished it) when this one tried to. */
export class MigrationEndedError extends Error {
  override readonly name = 'MigrationEndedError';
}

export async function getProgress(migration: MigrationRecord): Promise<MigrationProgress> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: progressKeyOf(migration),
      ConsistentRead: true,
    }),
  );
  if (Item === undefined) return { source: 0, moved: 0 };
  return {
    source: Number(Item.source),
    ...(typeof Item.cursor === 'string' ? { cursor: JSON.parse(Item.cursor) as Record<string, unknown> } : {}),
    moved: Number(Item.moved),
  };
}

/** Saves the checkpoint; the cursor is kept as JSON so a key of any shape round-trips. */
export async function saveProgress(migration: MigrationRecord, progress: MigrationProgress): Promise<void> {
  await db.send(
    new PutCommand({
      TableName: TABLE_NAME,
      Item: {
        ...progressKeyOf(migration),
        source: progress.source,
        cursor: progress.cursor === undefined ? undefined : JSON.stringify(progress.cursor),
        moved: progress.moved,
      },
    }),
  );
}

/** Migrations still pending or in progress, oldest first, across tenants (for the operator and the local stack). */
export async function listActiveMigrations(limit: number): Promise<MigrationRecord[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': ACTIVE_PARTITION },
      Limit: limit,
    }),
  );
  return Items.map(toMigration);
}
