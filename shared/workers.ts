/**
 * The workers: functions woken by the table's stream, by the delivery queue or by a schedule rather than by a route
 * (docs/design.md "Work after the response"), and the consumers of the table's changes that the stream readers
 * serve. The CDK stack makes one function per reader, with one filtered event source on the stream, and one for
 * the delivery queue; the local stack polls DynamoDB Local's stream and the file queue and calls the same handlers. Like the route table, this module imports nothing at runtime so
 * that `infra/` can read it.
 */

import type { AccessDeclaration } from './grants';

/** What happened to an item: written first, written over, or deleted (a REMOVE carries only the image before). */
export type StreamEventName = 'INSERT' | 'MODIFY' | 'REMOVE';

/** A string attribute's test in a stream filter: one of these values, or a prefix. */
export type StringMatch =
  { readonly equals: readonly string[] } | { readonly prefix: string } | { readonly exists: true };

/**
 * One pattern of a stream reader's event filter (a record passes when any pattern matches): the kind of change, the
 * item's sort key (any of the tests), and string attributes of the item as written. Computed from the consumers'
 * interests in one place (`streamFiltersOf` in shared/db/item-change.ts); the event source mapping applies it in AWS
 * (infra/service-function.ts turns it into Lambda filter criteria), the local poller with `matchesStreamFilter`.
 */
export interface StreamFilter {
  readonly eventNames: readonly StreamEventName[];
  readonly sortKey?: readonly StringMatch[];
  readonly newImage?: Readonly<Record<string, StringMatch>>;
}

/**
 * What an item of the table is, as the stream decoder names it (shared/db/item-change.ts, the only code that knows
 * which keys and attributes make each kind). Consumers name kinds, never keys.
 */
export type ItemKind =
  | 'activity'
  | 'notification'
  | 'recording'
  | 'crdtHead'
  | 'crdtVersion'
  | 'profile'
  | 'migration'
  | 'membership'
  | 'grant'
  | 'groupMember'
  | 'document';

/**
 * The changes of one kind a consumer wants: on these events (INSERT and MODIFY when omitted), with these attribute
 * values. A REMOVE is named from the image before it, and its filter tests the kind's sort key only (see
 * `streamFiltersOf`): a kind wanted on REMOVE has a sort-key test, and an interest in REMOVE names no `where`.
 */
export interface ChangeInterest {
  readonly kind: ItemKind;
  readonly eventNames?: readonly StreamEventName[];
  /** String attributes of the new image (not keys: those belong to the kind). */
  readonly where?: Readonly<Record<string, StringMatch>>;
}

/**
 * A consumer of the table's changes (docs/architecture.md "The stream and the delivery pipeline"): it declares the
 * changes it wants and its own access; a stream reader decodes each record once and hands it the changes it
 * declared. Its module exports `consume` (shared/domain/stream/dispatch.ts `Consume`).
 */
export interface StreamConsumer extends AccessDeclaration {
  /** Names it in logs and in the grant check. */
  readonly id: string;
  readonly changes: readonly ChangeInterest[];
  /**
   * Attempts at a change it fails on, within one invocation, before the change goes to the dead letters
   * (shared/domain/stream/dispatch.ts); DEFAULT_CONSUMER_ATTEMPTS there when omitted.
   */
  readonly attempts?: number;
  readonly summary: string;
}

/**
 * A reader of the table's stream: one function and one event source mapping (AWS advises at most two readers per
 * shard, so there are at most two, whatever the number of consumers). Its filter is the union of its consumers'
 * interests; its access is the union of theirs (`readerAccess`).
 */
export interface Worker extends AccessDeclaration {
  /** Construct id in the stack. */
  readonly id: string;
  /** Handler file relative to the project root; it exports `handler` (a DynamoDB stream handler) and `consumers`. */
  readonly entry: string;
  readonly consumers: readonly StreamConsumer[];
  /** Records per invocation (the event source's batch size); DEFAULT_STREAM_BATCH_SIZE when omitted. */
  readonly batchSize?: number;
  readonly summary: string;
}

/** A stream reader's batch size when it names none: the event source mapping's default for a stream. */
export const DEFAULT_STREAM_BATCH_SIZE = 10;

/** A worker woken by the delivery queue (an SQS handler). */
export interface QueueWorker extends AccessDeclaration {
  readonly id: string;
  readonly entry: string;
  readonly summary: string;
}

/** The migration item among stream records, and the statuses in which the worker has work to do. */
export const MIGRATION_RECORD_TYPE = 'documentMigration';
export const ACTIVE_MIGRATION_STATUSES: readonly string[] = ['pending', 'in_progress'];

/** Runs document migrations (shared/domain/migration.ts); a run can take many minutes and wakes itself again. */
export const migrationConsumer = {
  id: 'DocumentMigration',
  changes: [{ kind: 'migration', where: { status: { equals: ACTIVE_MIGRATION_STATUSES } } }],
  table: 'write',
  // Per document: notification settings (gsi1); grants, notifications, recordings (gsi2); the recipients of
  // each notification it moves (gsi3); activities (their document timeline, gsi7).
  indexes: ['gsi1', 'gsi2', 'gsi3', 'gsi7'],
  // Closes the document's live connections when a run starts (decisions §13).
  connections: 'manage',
  // A failing run is tried as often as the migration allows itself (MAX_FAILED_RUNS in shared/domain/migration.ts,
  // test/connected/migration.test.ts holds them equal): the last marks it failed and releases its locks, so a migration
  // ends `failed` rather than in the dead letters.
  attempts: 5,
  summary: 'Moves a document and everything of it to its new id (document migration).',
} as const satisfies StreamConsumer;

/**
 * The items that can be events (shared/domain/webhooks/events.ts decides which writes of them are): activity
 * records, notifications (added, or re-added: webhooks take the INSERT, emails both), recordings, CRDT heads and
 * deltas, versions of editors (kept, restored), and migrations that end.
 */
export const webhookEventsConsumer = {
  id: 'WebhookEvents',
  changes: [
    { kind: 'activity' },
    { kind: 'notification' },
    { kind: 'recording' },
    { kind: 'crdtHead' },
    { kind: 'crdtVersion' },
    { kind: 'migration', eventNames: ['MODIFY'], where: { status: { equals: ['completed', 'failed'] } } },
  ],
  table: 'write',
  queue: 'send',
  summary:
    'Turns changes of the table into advanced webhook messages and notification emails, and queues their deliveries.',
} as const satisfies StreamConsumer;

/**
 * Profiles written and memberships added: the consumer keeps the copies of name, email and initial that memberships
 * carry (shared/domain/profile-copies.ts) in step with the profile.
 */
export const profileCopiesConsumer = {
  id: 'ProfileCopies',
  changes: [{ kind: 'profile' }, { kind: 'membership', eventNames: ['INSERT'] }],
  table: 'write',
  // Every membership of a user (gsi1).
  indexes: ['gsi1'],
  summary: "Keeps the copies of name, email and initial on memberships in step with the users' profiles.",
} as const satisfies StreamConsumer;

/**
 * Changes appended to an editor's log (live edits, and REST writes that met another write): the consumer folds an
 * editor's log into its stored state when it has grown past a bound, so reads of the editor stay bounded
 * (shared/domain/crdt/compaction.ts).
 */
export const crdtCompactionConsumer = {
  id: 'CrdtCompaction',
  changes: [{ kind: 'crdtHead', eventNames: ['INSERT'] }],
  table: 'write',
  summary: "Folds an editor's log of Yjs changes into its stored state when the log has grown past its bound.",
} as const satisfies StreamConsumer;

/**
 * Changes of an editor's content (heads and deltas written): the consumer gives the editor a version check, due when
 * it will have been quiet long enough for an automatic version (shared/domain/crdt/auto-versions.ts, decisions §14).
 */
export const crdtVersionsConsumer = {
  id: 'CrdtVersions',
  changes: [{ kind: 'crdtHead' }],
  table: 'write',
  summary:
    'Gives an editor that changed a check, due when it will have been quiet long enough for an automatic version.',
} as const satisfies StreamConsumer;

/**
 * Changes that may take a user's access to documents away (decisions §13 "Nothing lost, nothing stale"): memberships
 * and grants written over or removed, group memberships removed, documents written. The consumer re-checks the open
 * live connections they concern and closes or demotes them (shared/domain/live/revocation.ts). It wants INSERT too
 * where that costs no filter pattern (a membership's pattern then covers the profile copies', a grant's and a
 * document's merge with the events'), and ignores them: a change that adds access concerns nobody.
 */
export const liveRevocationConsumer = {
  id: 'LiveRevocation',
  changes: [
    { kind: 'membership', eventNames: ['INSERT', 'MODIFY', 'REMOVE'] },
    { kind: 'grant', eventNames: ['INSERT', 'MODIFY', 'REMOVE'] },
    { kind: 'groupMember', eventNames: ['REMOVE'] },
    { kind: 'document' },
  ],
  table: 'write',
  // A user's open connections in an organization (gsi1: shared/db/live-connection.ts).
  indexes: ['gsi1'],
  // Tells a connection why and closes it.
  connections: 'manage',
  summary:
    'Re-checks the open live connections of users whose access a change may have taken away, and closes or demotes them.',
} as const satisfies StreamConsumer;

/** The access of a reader: every grant any of its consumers declares (each consumer is checked against its own). */
export function readerAccess(consumers: readonly StreamConsumer[]): AccessDeclaration {
  const union = <T>(values: ReadonlyArray<readonly T[] | undefined>): T[] => [
    ...new Set(values.flatMap((value) => value ?? [])),
  ];
  const table = consumers.some((consumer) => consumer.table === 'write')
    ? 'write'
    : consumers.some((consumer) => consumer.table === 'read')
      ? 'read'
      : undefined;
  const indexes = union(consumers.map((consumer) => consumer.indexes));
  const kms = union(consumers.map((consumer) => consumer.kms));
  return {
    ...(table === undefined ? {} : { table }),
    ...(indexes.length === 0 ? {} : { indexes }),
    ...(kms.length === 0 ? {} : { kms }),
    ...(consumers.some((consumer) => consumer.queue === 'send') ? { queue: 'send' as const } : {}),
    ...(consumers.some((consumer) => consumer.ses === 'send') ? { ses: 'send' as const } : {}),
    ...(consumers.some((consumer) => consumer.connections === 'manage') ? { connections: 'manage' as const } : {}),
  };
}

/**
 * The long runs: a migration can run for many minutes in one invocation (and wakes itself through the stream for
 * the next), so it has a reader of its own, and its runs hold up no other consumer's changes.
 */
export const documentMigrationWorker = {
  id: 'DocumentMigrationWorker',
  entry: 'functions/workers/document-migration.ts',
  consumers: [migrationConsumer],
  ...readerAccess([migrationConsumer]),
  summary: migrationConsumer.summary,
} as const satisfies Worker;

/**
 * Every other consumer of the table's changes: short work, batched. Adding a consumer is declaring it here and
 * naming its `consume` in the reader's entry (the type checker asks for it).
 */
export const streamChangesWorker = {
  id: 'StreamChangesWorker',
  entry: 'functions/workers/stream-changes.ts',
  consumers: [
    webhookEventsConsumer,
    profileCopiesConsumer,
    crdtCompactionConsumer,
    crdtVersionsConsumer,
    liveRevocationConsumer,
  ],
  ...readerAccess([
    webhookEventsConsumer,
    profileCopiesConsumer,
    crdtCompactionConsumer,
    crdtVersionsConsumer,
    liveRevocationConsumer,
  ]),
  // Its records are independent and handled side by side: larger batches, fewer invocations.
  batchSize: 100,
  summary:
    "Reads the table's changes once and hands each to the consumers that declared it: webhook events and emails, profile copies, CRDT log compaction, version checks, live revocation.",
} as const satisfies Worker;

/** The readers of the table's stream: at most two (test/infra/synthesized/stream.ts). */
export const workers: readonly Worker[] = [documentMigrationWorker, streamChangesWorker];

/** The delivery queue's one worker: every kind of job (shared/domain/delivery/jobs.ts), webhooks' and email's. */
export const deliveryQueueWorker = {
  id: 'DeliveryQueueWorker',
  entry: 'functions/workers/delivery.ts',
  table: 'write',
  kms: ['decrypt'],
  queue: 'send',
  ses: 'send',
  summary:
    "Runs the delivery queue's jobs: webhook delivery attempts (signed, retried on the schedule), email attempts and debounced CRDT emissions.",
} as const satisfies QueueWorker;

export const queueWorkers: readonly QueueWorker[] = [deliveryQueueWorker];

/**
 * A worker run on a schedule rather than woken by a change: an EventBridge rule in AWS, an interval of the local
 * stack (local/local-stack.ts). Each run's event is `{periodSeconds}`: how long until the next run.
 */
export interface ScheduledWorker extends AccessDeclaration {
  readonly id: string;
  readonly entry: string;
  /** Minutes between runs in AWS (an EventBridge rate: one minute at the finest). */
  readonly everyMinutes: number;
  /** Seconds between runs on the local stack, which has no such floor. */
  readonly localEverySeconds: number;
  readonly summary: string;
}

/**
 * The 60-s backstop of live access (decisions §13): a grant that expires by time writes nothing to the stream, so
 * each run re-checks the open connections whose last check is too old for the bound to hold until the next run (50 s
 * with the local stack's 10-s runs; every connection with AWS's one-minute rule), read from the check index
 * (shared/domain/live/revocation.ts `recheckDueConnections`), and closes or demotes them.
 */
export const liveAccessBackstopWorker = {
  id: 'LiveAccessBackstop',
  entry: 'functions/workers/live-access-backstop.ts',
  everyMinutes: 1,
  localEverySeconds: 10,
  table: 'write',
  // Connections due for an access check (gsi2: shared/db/live-connection.ts).
  indexes: ['gsi2'],
  connections: 'manage',
  summary:
    'Re-checks the access of open live connections, silent ones too, often enough that none goes 60 s unchecked, and closes or demotes them.',
} as const satisfies ScheduledWorker;

/**
 * Automatic versions of editors (decisions §14): each run takes the editors whose version check is due (gsi2, by due
 * time: shared/db/crdt-versions.ts) and keeps a version of those quiet long enough (or changed long enough ago),
 * moving the others' checks to when they will be due.
 */
export const crdtAutoVersionsWorker = {
  id: 'CrdtAutoVersions',
  entry: 'functions/workers/crdt-auto-versions.ts',
  everyMinutes: 1,
  localEverySeconds: 10,
  table: 'write',
  // Version checks by due time (gsi2: shared/db/crdt-versions.ts).
  indexes: ['gsi2'],
  summary:
    'Keeps an automatic version of each editor quiet long enough since it changed, or changed long enough ago, from the version checks due.',
} as const satisfies ScheduledWorker;

export const scheduledWorkers: readonly ScheduledWorker[] = [liveAccessBackstopWorker, crdtAutoVersionsWorker];
