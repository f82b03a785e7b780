/**
 * Document migration (docs/api-spec.md "Migrate", docs/decisions.md §5): everything of a document moves to a new document id —
 * memberships, grants on it, notification settings, CRDT data, notifications (with their feed entries),
 * activities, recordings and comment threads, and last the document item itself.
 *
 * The request only takes the locks and writes the pending migration, in one transaction; the worker
 * (functions/workers/document-migration.ts, woken by the table's stream) moves the data. While it runs, every
 * write to either id fails (shared/domain/document-locks.ts). The worker moves a page of items at a time: puts of
 * the moved items, then deletes of the old keys where the key changes. Every move is a deterministic function of
 * the item read, so redoing a page after a crash writes the same items again: no duplicates, nothing lost. A
 * moved item also leaves the query that found it, so a run that resumes from its checkpoint, or from the start,
 * finds only what is left. A last pass over every source picks up what an index showed late, then one
 * transaction moves the document item, releases the locks and completes the migration.
 *
 * Rules where the contract is silent (also in docs/project-decisions.md):
 * - `newDocumentId` must differ from `documentId`; data already under the new id that has no document item (a
 *   grant, activities) is kept, and where both ids hold the same key (a user's grant) the migrated one wins.
 * - A run that fails is retried; after MAX_FAILED_RUNS failures the migration is `failed`, its locks released.
 *   The old document still exists then (it moves last), so migrating again with the same ids resumes the move.
 */
import { newId } from '../crypto/tokens';
import { batchWrite, deleteRequest, keyOfItem, putRequest, type Item } from '../db/batch';
import { documentCrdtQuery, crdtItemMovedTo, lockEditorLogs, unlockEditorLogs } from '../db/crdt';
import { activityMovedTo, documentLogQuery, toActivity } from '../db/activity';
import { documentMembershipsQuery, membershipMovedTo } from '../db/membership';
import {
  MigrationEndedError,
  finishMigrationItems,
  getMigration,
  getProgress,
  markInProgress,
  recordFailedRun,
  saveProgress,
  startMigrationItems,
  type MigrationProgress,
  type MigrationRecord,
  type MigrationStatus,
  wakeMigration,
} from '../db/migration';
import {
  configMovedTo,
  documentConfigsQuery,
  documentNotificationsQuery,
  notificationMovedTo,
} from '../db/notification';
import { moveDocumentItems, requireDocumentItem, requireNoDocumentItem } from '../db/organization';
import { documentGrantsQuery, grantMovedTo } from '../db/permission';
import { queryPage, type QuerySpec } from '../db/query';
import { documentRecordingsQuery, recordingMovedTo } from '../db/recording';
import { documentThreadsQuery, threadMovedTo } from '../db/comment-annotation';
import { named, transactWrite } from '../db/transact';
import { AlreadyExistsError, NotFoundError, invalidFields } from '../core/errors';
import { closeDocumentConnections } from './live/room';
import { logger } from '../core/logger';

export interface MigrateInput {
  organizationId: string;
  documentId: string;
  newDocumentId: string;
}

/**
 * Starts a migration: the document must exist, the new id must not, and neither may be held by another
 * migration. Returns the migration id. Throws InvalidArgumentError (same ids), NotFoundError, AlreadyExistsError,
 * FailedPreconditionError; nothing is written then.
 */
export async function startMigration(apiKeyId: string, input: MigrateInput, now = Date.now()): Promise<string> {
  const { organizationId, documentId, newDocumentId } = input;
  if (documentId === newDocumentId)
    throw invalidFields([{ path: 'data.newDocumentId', message: 'Must differ from documentId.' }]);
  const migration: MigrationRecord = {
    apiKeyId,
    organizationId,
    migrationId: newId('mig_'),
    documentId,
    newDocumentId,
    status: 'pending',
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  };
  await transactWrite([
    requireDocumentItem(apiKeyId, organizationId, documentId),
    named(
      requireNoDocumentItem(apiKeyId, organizationId, newDocumentId),
      () => new AlreadyExistsError('A document with newDocumentId already exists.'),
    ),
    ...startMigrationItems(migration),
  ]);
  return migration.migrationId;
}

/** What Migrate Status answers. Throws NotFoundError for an id of another organization or tenant. */
export async function migrationStatus(apiKeyId: string, organizationId: string, migrationId: string) {
  const migration = await getMigration(apiKeyId, organizationId, migrationId);
  if (migration === undefined) throw new NotFoundError('Migration not found.');
  return {
    migrationId,
    status: migration.status,
    ...(migration.error === undefined ? {} : { error: migration.error }),
  };
}

interface MoveRef {
  apiKeyId: string;
  organizationId: string;
  from: string;
  to: string;
}

/** One kind of a document's data: how to find what is left under the old id, and the items a moved one becomes. */
interface Mover {
  name: string;
  query: (ref: MoveRef) => QuerySpec;
  move: (ref: MoveRef, item: Item) => Item[] | Promise<Item[]>;
  /** True when the moved item has another key: the old one is deleted after the new one is written. */
  keyChanges: boolean;
}

/** In the order they are moved; a checkpoint names its mover by position, so only ever append. */
const MOVERS: readonly Mover[] = [
  {
    name: 'memberships',
    query: (r) => documentMembershipsQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => [membershipMovedTo(r.apiKeyId, item, r.to)],
    keyChanges: true,
  },
  {
    name: 'grants',
    query: (r) => documentGrantsQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => [grantMovedTo(r.apiKeyId, item, r.to)],
    keyChanges: true,
  },
  {
    name: 'notification settings',
    query: (r) => documentConfigsQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => [configMovedTo(r.apiKeyId, item, r.organizationId, r.to)],
    keyChanges: true,
  },
  {
    name: 'CRDT data',
    query: (r) => documentCrdtQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => [crdtItemMovedTo(r.apiKeyId, item, r.organizationId, r.to)],
    keyChanges: true,
  },
  {
    name: 'notifications',
    query: (r) => documentNotificationsQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => notificationMovedTo(r.apiKeyId, item, r.to),
    keyChanges: false,
  },
  {
    name: 'activities',
    query: (r) => documentLogQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => [activityMovedTo(r.apiKeyId, toActivity(item, r.organizationId), r.to)],
    keyChanges: false,
  },
  {
    name: 'recordings',
    query: (r) => documentRecordingsQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => [recordingMovedTo(r.apiKeyId, item, r.to)],
    keyChanges: false,
  },
  {
    name: 'comment threads',
    query: (r) => documentThreadsQuery(r.apiKeyId, r.organizationId, r.from),
    move: (r, item) => threadMovedTo(r.apiKeyId, item, r.to),
    keyChanges: false,
  },
];

/** The position of the CRDT data among MOVERS: its editors' LOG items are locked before it runs. */
const CRDT_MOVER = MOVERS.findIndex((mover) => mover.name === 'CRDT data');

/** Items read and moved per step (and per checkpoint). */
const PAGE_SIZE = 100;
/** Passes of the last sweep before a run gives up (an index that keeps showing moved items). */
const MAX_SWEEPS = 10;
const SWEEP_PAUSE_MS = 200;

/** Moves the items of one page: every new item first, then the old keys, so a crash in between loses nothing. */
async function movePage(mover: Mover, ref: MoveRef, items: readonly Item[]): Promise<void> {
  const moved = (await Promise.all(items.map(async (item) => mover.move(ref, item)))).flat();
  await batchWrite(moved.map(putRequest));
  if (mover.keyChanges) await batchWrite(items.map((item) => deleteRequest(keyOfItem(item))));
}

/**
 * Moves whatever every source still shows under the old id, pass after pass, until a pass finds nothing. Index
 * reads are eventually consistent: an item written just before the locks may show up late. Throws when items
 * keep showing up, so the run fails and is retried.
 */
async function sweep(ref: MoveRef): Promise<void> {
  for (let pass = 1; pass <= MAX_SWEEPS; pass += 1) {
    let found = 0;
    for (const mover of MOVERS) {
      let cursor: Record<string, unknown> | undefined;
      do {
        const page = await queryPage(mover.query(ref), PAGE_SIZE, cursor);
        await movePage(mover, ref, page.items);
        found += page.items.length;
        cursor = page.cursor;
      } while (cursor !== undefined);
    }
    if (found === 0) return;
    await new Promise((resolve) => setTimeout(resolve, SWEEP_PAUSE_MS));
  }
  throw new Error(`Items of document ${ref.from} kept appearing after ${MAX_SWEEPS} passes.`);
}

export interface RunOptions {
  /** Epoch ms after which the run saves its place and hands the rest to a fresh invocation. */
  deadline: number;
  /** Called after each page with the number of items moved so far (tests stop a run half-way with it). */
  afterPage?: (moved: number) => void;
}

/**
 * Runs (or resumes) the migration from its checkpoint. Returns the status it left: `completed`, `in_progress`
 * when the deadline came first (the worker is woken again through the stream), or the final status of a
 * migration that had already ended. Throws on storage errors; running again continues where it stopped.
 */
export async function runMigration(migration: MigrationRecord, options: RunOptions): Promise<MigrationStatus> {
  if (!(await markInProgress(migration, Date.now()))) {
    return (
      (await getMigration(migration.apiKeyId, migration.organizationId, migration.migrationId))?.status ?? 'failed'
    );
  }
  const ref: MoveRef = {
    apiKeyId: migration.apiKeyId,
    organizationId: migration.organizationId,
    from: migration.documentId,
    to: migration.newDocumentId,
  };
  // Live connections of the document end now (decisions §13); new ones are refused while the locks are held. Every
  // run closes what is open, which is nothing after the first.
  await closeDocumentConnections(
    { apiKeyId: ref.apiKeyId, organizationId: ref.organizationId, documentId: ref.from },
    `The document is being migrated to ${ref.to}; authorize again for the new document id.`,
  );
  let progress: MigrationProgress = await getProgress(migration);
  // Live appends check no lock item (the hot path): they check their editor's LOG item, which they update anyway.
  // Lock every one before any CRDT item is read, so no append lands after the copy read its editor (decisions §5).
  if (progress.source <= CRDT_MOVER)
    await lockEditorLogs(ref.apiKeyId, ref.organizationId, ref.from, migration.migrationId);
  for (; progress.source < MOVERS.length; progress = { source: progress.source + 1, moved: progress.moved }) {
    const mover = MOVERS[progress.source];
    do {
      if (Date.now() >= options.deadline) {
        await saveProgress(migration, progress);
        await wakeMigration(migration, Date.now());
        return 'in_progress';
      }
      const page = await queryPage(mover.query(ref), PAGE_SIZE, progress.cursor);
      await movePage(mover, ref, page.items);
      progress = { source: progress.source, cursor: page.cursor, moved: progress.moved + page.items.length };
      await saveProgress(migration, progress);
      options.afterPage?.(progress.moved);
    } while (progress.cursor !== undefined);
  }
  await sweep(ref);
  const documentMove = await moveDocumentItems(ref.apiKeyId, ref.organizationId, ref.from, ref.to);
  await transactWrite([...documentMove, ...finishMigrationItems(migration, { status: 'completed' }, Date.now())]);
  logger.info('document migration completed', { migrationId: migration.migrationId, moved: progress.moved });
  return 'completed';
}

/** Failed runs after which a migration is given up (the stream retries a failed run until then). */
export const MAX_FAILED_RUNS = 5;

/** What a failed migration reports; the cause is logged, never shown (it may name storage internals). */
export const FAILED_MESSAGE =
  'The migration could not be completed. Migrate again with the same document ids to resume it.';

/**
 * Counts a failed run. Returns `retry` while runs are left, or ends the migration as `failed` (locks released)
 * and returns `failed`.
 */
export async function recordRunFailure(migration: MigrationRecord, error: unknown): Promise<'retry' | 'failed'> {
  const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  logger.error('document migration run failed', { migrationId: migration.migrationId, cause });
  const failures = await recordFailedRun(migration, cause, Date.now());
  if (failures < MAX_FAILED_RUNS) return 'retry';
  try {
    await transactWrite(finishMigrationItems(migration, { status: 'failed', error: FAILED_MESSAGE }, Date.now()));
  } catch (cancelled) {
    // Another run ended it meanwhile: its outcome stands.
    if (!(cancelled instanceof MigrationEndedError)) throw cancelled;
  }
  // The data stays at the old id: live edits to it may append again, once the status is final.
  await unlockEditorLogs(migration.apiKeyId, migration.organizationId, migration.documentId, migration.migrationId);
  return 'failed';
}
