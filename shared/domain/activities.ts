/**
 * Activity logs (docs/api-spec.md "Activity logs", docs/decisions.md §7): adding records all or nothing under the tenant's activity
 * config (enabled, immutable, comment triggers), and reading them in time order through filters, in pages.
 */
import { createHash } from 'node:crypto';
import { pageTokenAfter, readPageAfter } from '../db/page-token';
import { newId } from '../crypto/tokens';
import {
  ActivityAppeared,
  FEATURE_TYPES,
  getActivities,
  matchesFilter,
  putActivityItem,
  queryActivityLog,
  takePage,
  type ActivityContent,
  type ActivityFilter,
  type ActivityWrite,
  type LogPage,
  type StoredActivity,
} from '../db/activity';
import { getActivityConfig, type ActivityServiceConfig } from '../db/activity-config';
import { MAX_TRANSACT_ITEMS, type TransactItem } from '../db/transact';
import { AbortedError, AlreadyExistsError, FailedPreconditionError } from '../core/errors';
import { canonicalJson } from '../core/canonical-json';
import { assertDocumentsWritable, documentsIn, transactGuarded } from './document-locks';

export { FEATURE_TYPES };

/**
 * Largest record accepted, as JSON. An item holds at most 400 KB; this leaves room for the keys and the copied
 * filter attributes, and three such records already fill the 1 MiB request body.
 */
export const MAX_RECORD_BYTES = 300 * 1024;

/**
 * Content per page of Get Activities. A Lambda response holds at most 6 MB and JSON inside its string body can
 * double in size when escaped: a page whose records would pass this ends early (with a token), so 1000 large
 * records never turn into a failed response.
 */
export const MAX_PAGE_BYTES = 2 * 1024 * 1024;

/** A record as sent: `id` optional. */
export type ActivityInput = Omit<ActivityContent, 'id'> & { id?: string };

export interface AddActivitiesInput {
  organizationId: string;
  documentId?: string;
  activities: ActivityInput[];
}

/**
 * Identity of a record for immutable logs: what the client supplied (its fields and the document it was sent
 * for), never the server's timestamp or metadata. Key order inside objects does not matter. Not stored: the
 * content round-trips exactly as JSON, so the hash of a stored record is computed again from it when compared.
 */
export function contentHash(documentId: string | undefined, content: ActivityContent): string {
  return createHash('sha256').update(canonicalJson({ documentId, content })).digest('base64url');
}

/** A `comment` record whose actionType is switched off (explicitly false) in `triggers.comment` is not stored. */
export function switchedOff(
  config: ActivityServiceConfig,
  activity: Pick<ActivityInput, 'featureType' | 'actionType'>,
): boolean {
  return activity.featureType === 'comment' && config.triggers?.comment?.[activity.actionType] === false;
}

const count = (n: number) => `${n} ${n === 1 ? 'activity' : 'activities'}`;

function summary(added: number, unchanged: number, skipped: number): string {
  const parts = [`${count(added)} added`];
  if (unchanged > 0) parts.push(`${count(unchanged)} already stored unchanged`);
  if (skipped > 0) parts.push(`${count(skipped)} skipped (comment trigger switched off)`);
  return `${parts.join('; ')}.`;
}

const ATTEMPTS = 4;

/**
 * Adds the records in one transaction and returns the message naming how many were added, found unchanged and
 * skipped. Throws FailedPreconditionError when the activity config is not enabled or the document is being
 * migrated; AlreadyExistsError when the
 * log is immutable and a record's id is stored with other content (nothing of the batch is written then).
 * Immutable writes are conditional: a record that appears concurrently makes the batch read again and decide anew.
 */
export async function addActivities(apiKeyId: string, input: AddActivitiesInput, now = Date.now()): Promise<string> {
  const config = (await getActivityConfig(apiKeyId))?.config;
  if (config?.isEnabled !== true) {
    throw new FailedPreconditionError(
      'Activity logs are not enabled: enable them with /v2/workspace/activityconfig/update.',
    );
  }
  // Seeding makes logs immutable; a config that never said otherwise is treated the same way.
  const immutable = config.immutable !== false;
  const kept = input.activities.filter((activity) => !switchedOff(config, activity));
  const writes: ActivityWrite[] = kept.map((activity, seq) => {
    const content: ActivityContent = { ...activity, id: activity.id ?? newId('act_') };
    const { organizationId, documentId } = input;
    return { organizationId, documentId, content, timestamp: now, seq };
  });
  const skipped = input.activities.length - kept.length;
  const document = documentsIn(input.organizationId, [input.documentId]);
  await assertDocumentsWritable(apiKeyId, document);
  for (let attempt = 1; ; attempt += 1) {
    const stored = immutable
      ? await getActivities(
          apiKeyId,
          input.organizationId,
          kept.filter((a) => a.id !== undefined).map((a) => String(a.id)),
        )
      : new Map<string, StoredActivity>();
    const fresh = writes.filter((write) => {
      const existing = stored.get(write.content.id);
      if (
        existing !== undefined &&
        contentHash(existing.documentId, existing.content) !== contentHash(write.documentId, write.content)
      ) {
        throw new AlreadyExistsError(
          `Activity ${write.content.id} already exists with different content; activity logs are immutable.`,
        );
      }
      return existing === undefined;
    });
    // One item per record: 100 records fill DynamoDB's 100-item transaction. Items written with a record (in the
    // same transaction, so they can never disagree with it) go into this list and count against that budget. The
    // document's migration-lock check rides along when there is room (up to 99 records); a full batch of 100
    // relies on the check above, and the migration's last pass over the document's log picks up such a record.
    const items: TransactItem[] = fresh.flatMap((write) => [
      putActivityItem(apiKeyId, write, { mustBeNew: immutable }),
    ]);
    try {
      await transactGuarded(apiKeyId, items, items.length < MAX_TRANSACT_ITEMS ? document : []);
      return summary(fresh.length, writes.length - fresh.length, skipped);
    } catch (error) {
      if (!(error instanceof ActivityAppeared)) throw error;
      if (attempt >= ATTEMPTS) throw new AbortedError('Activities were added concurrently with the same ids; retry.');
    }
  }
}

export interface GetActivitiesInput extends ActivityFilter {
  organizationId: string;
  activityIds?: string[];
  order?: 'asc' | 'desc';
  pageSize: number;
  pageToken?: string;
}

/** A record as the API returns it: the client's fields, then metadata and the server timestamp. */
export function presentActivity(apiKeyId: string, activity: StoredActivity) {
  const { organizationId, documentId } = activity;
  return {
    ...activity.content,
    metadata: { apiKey: apiKeyId, organizationId, ...(documentId === undefined ? {} : { documentId }) },
    timestamp: activity.timestamp,
  };
}

const sortedSet = (values: readonly string[] | undefined) =>
  values === undefined ? undefined : [...new Set(values)].sort();

/**
 * One page of records, newest first unless `order: 'asc'`. Named `activityIds` are read by key (at most 100) and
 * narrowed by the other filters; otherwise the page comes from the narrowest timeline (shared/db/activity.ts).
 * Pages are full except the last, unless MAX_PAGE_BYTES ends one early or a filter the timeline does not key on
 * (featureTypes, actionTypes, or a second id filter) reaches its read budget: such a page may be short, even
 * empty, and still carry a token. Throws InvalidArgumentError for a page token of another tenant or query.
 */
export async function listActivities(apiKeyId: string, input: GetActivitiesInput) {
  const { pageToken, pageSize, organizationId, ...filter } = input;
  const query = {
    ...filter,
    featureTypes: sortedSet(filter.featureTypes),
    actionTypes: sortedSet(filter.actionTypes),
    activityIds: sortedSet(filter.activityIds),
    order: filter.order ?? 'desc',
  };
  const scope = { tenant: apiKeyId, query: { operation: 'activities/get', organizationId, ...query } };
  const after = await readPageAfter(pageToken, scope);
  const ascending = query.order === 'asc';
  let page: LogPage;
  if (query.activityIds !== undefined) {
    const found = await getActivities(apiKeyId, organizationId, query.activityIds, { consistent: false });
    const ordered = [...found.values()]
      .filter((activity) => matchesFilter(activity, query))
      .filter((activity) => after === undefined || (ascending ? activity.position > after : activity.position < after))
      .sort((a, b) => (a.position < b.position ? -1 : 1) * (ascending ? 1 : -1));
    page = takePage(ordered, pageSize, MAX_PAGE_BYTES);
  } else {
    page = await queryActivityLog(apiKeyId, organizationId, query, {
      limit: pageSize,
      maxBytes: MAX_PAGE_BYTES,
      ascending,
      after,
    });
  }
  return {
    activities: page.activities.map((activity) => presentActivity(apiKeyId, activity)),
    pageToken: await pageTokenAfter(scope, page.after),
  };
}
