/**
 * The workers: functions woken by the table's stream or by the delivery queue rather than by a route
 * (docs/design.md "Work after the response"). The CDK stack makes one function per entry, with a filtered event
 * source on the stream, or the delivery queue's event source; the local stack polls DynamoDB Local's stream and
 * the file queue and calls the same handlers. Like the route table, this module imports nothing at runtime so
 * that `infra/` can read it.
 */

import type { AccessDeclaration } from './grants';

/** A string attribute's test in a stream filter: one of these values, or a prefix. */
export type StringMatch = { readonly equals: readonly string[] } | { readonly prefix: string } | { readonly exists: true };

/**
 * One pattern of a stream worker's event filter (a record passes when any pattern matches): the kind of change,
 * the item's sort key, and string attributes of the item as written. The event source mapping applies it in AWS
 * (infra/service-function.ts turns it into Lambda filter criteria); the local poller applies `matchesStreamFilter`.
 */
export interface StreamFilter {
  readonly eventNames: readonly ('INSERT' | 'MODIFY')[];
  readonly sortKey?: StringMatch;
  readonly newImage?: Readonly<Record<string, StringMatch>>;
}

/** A worker woken by the table's stream. */
export interface Worker extends AccessDeclaration {
  /** Construct id in the stack. */
  readonly id: string;
  /** Handler file relative to the project root; it exports `handler` (a DynamoDB stream handler). */
  readonly entry: string;
  /** The records it is woken for; its handler checks them again. */
  readonly filters: readonly StreamFilter[];
  /** Records per invocation (the event source's batch size); DEFAULT_STREAM_BATCH_SIZE when omitted. */
  readonly batchSize?: number;
  readonly summary: string;
}

/** A stream worker's batch size when it names none: the event source mapping's default for a stream. */
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

export const documentMigrationWorker = {
  id: 'DocumentMigrationWorker',
  entry: 'functions/workers/document-migration.ts',
  filters: [{ eventNames: ['INSERT', 'MODIFY'], newImage: { recordType: { equals: [MIGRATION_RECORD_TYPE] }, status: { equals: ACTIVE_MIGRATION_STATUSES } } }],
  table: 'write',
  // Per document: notification settings (gsi1); grants, notifications, recordings (gsi2); the recipients of
  // each notification it moves (gsi3); activities (their document timeline, gsi7).
  indexes: ['gsi1', 'gsi2', 'gsi3', 'gsi7'],
  summary: 'Moves a document and everything of it to its new id (document migration).',
} as const satisfies Worker;

/**
 * The items that can be events (shared/domain/webhooks/events.ts decides which writes of them are): activity
 * records, notifications, recordings, CRDT heads and deltas, and migrations that end. Five patterns: Lambda's
 * default limit of filters per event source.
 */
export const webhookEventsWorker = {
  id: 'WebhookEventsWorker',
  entry: 'functions/workers/webhook-events.ts',
  filters: [
    { eventNames: ['INSERT', 'MODIFY'], sortKey: { equals: ['ACTIVITY'] } },
    // Notifications added (INSERT) or re-added (MODIFY with a new addedAt): webhooks take the INSERT, emails both.
    { eventNames: ['INSERT', 'MODIFY'], sortKey: { prefix: 'NOTIF#' } },
    { eventNames: ['INSERT', 'MODIFY'], sortKey: { prefix: 'REC#' } },
    { eventNames: ['INSERT', 'MODIFY'], sortKey: { prefix: 'E#' }, newImage: { lastUpdate: { exists: true } } },
    { eventNames: ['MODIFY'], newImage: { recordType: { equals: [MIGRATION_RECORD_TYPE] }, status: { equals: ['completed', 'failed'] } } },
  ],
  // Its records are independent and handled side by side: larger batches, fewer invocations.
  batchSize: 100,
  table: 'write',
  queue: 'send',
  summary: 'Turns changes of the table into advanced webhook messages and notification emails, and queues their deliveries.',
} as const satisfies Worker;

/**
 * Profiles written and memberships added: the worker keeps the copies of name, email and initial that memberships
 * carry (shared/domain/profile-copies.ts) in step with the profile.
 */
export const profileCopiesWorker = {
  id: 'ProfileCopiesWorker',
  entry: 'functions/workers/profile-copies.ts',
  filters: [
    { eventNames: ['INSERT', 'MODIFY'], sortKey: { equals: ['PROFILE'] } },
    { eventNames: ['INSERT'], newImage: { levelType: { exists: true } } },
  ],
  // A batch's users are read together: larger batches, fewer invocations.
  batchSize: 100,
  table: 'write',
  // Every membership of a user (gsi1).
  indexes: ['gsi1'],
  summary: 'Keeps the copies of name, email and initial on memberships in step with the users\' profiles.',
} as const satisfies Worker;

export const workers: readonly Worker[] = [documentMigrationWorker, webhookEventsWorker, profileCopiesWorker];

/** The delivery queue's one worker: every kind of job (shared/domain/delivery/jobs.ts), webhooks' and email's. */
export const deliveryQueueWorker = {
  id: 'DeliveryQueueWorker',
  entry: 'functions/workers/delivery.ts',
  table: 'write',
  kms: ['decrypt'],
  queue: 'send',
  ses: 'send',
  summary: 'Runs the delivery queue\'s jobs: webhook delivery attempts (signed, retried on the schedule), email attempts and debounced CRDT emissions.',
} as const satisfies QueueWorker;

export const queueWorkers: readonly QueueWorker[] = [deliveryQueueWorker];

/** A string attribute of a stream image: `{S: value}`; anything else is absent to a string test. */
type Image = Readonly<Record<string, { readonly S?: string } | undefined>> | undefined;

function matchesString(match: StringMatch, value: string | undefined): boolean {
  if ('exists' in match) return value !== undefined;
  if (value === undefined) return false;
  return 'prefix' in match ? value.startsWith(match.prefix) : match.equals.includes(value);
}

/** Whether a stream record passes a worker's filters, as the event source mapping decides it. */
export function matchesStreamFilter(filters: readonly StreamFilter[], record: { eventName?: string; keys: Image; newImage: Image }): boolean {
  return filters.some(
    (filter) =>
      filter.eventNames.some((name) => name === record.eventName) &&
      (filter.sortKey === undefined || matchesString(filter.sortKey, record.keys?.sk?.S)) &&
      Object.entries(filter.newImage ?? {}).every(([name, match]) => matchesString(match, record.newImage?.[name]?.S)),
  );
}
