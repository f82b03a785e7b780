/**
 * Notifications (docs/api-spec.md "Notifications", docs/decisions.md §6): delivery into recipients' feeds, reading by feed,
 * document or organization in time order, read state, "For You" persistence, and deletion by filters.
 */
import { pageTokenAfter, readPageAfter } from '../db/page-token';
import { newId } from '../crypto/tokens';
import { batchWrite, deleteRequest, putRequest, type WriteRequest } from '../db/batch';
import { queryLevelMembers } from '../db/membership';
import { cutPage } from '../db/query';
import {
  existingFeedEntries,
  feedEntryItem,
  feedEntryKey,
  getNotification,
  getNotifications,
  listRecipients,
  notificationItem,
  notificationKey,
  queryTimeline,
  timelineKey,
  updateNotificationItem,
  type NotificationRecord,
  type NotificationUser,
  type TimelineSource,
} from '../db/notification';
import { ensureOrganizationItem, getDocument, organizationExists, upsertDocumentItem } from '../db/organization';
import { deleteItem, putItem, type TransactItem } from '../db/transact';
import { settleEach, type BatchResult } from './batch-result';
import { NotFoundError } from '../core/errors';
import { logger } from '../core/logger';
import { accessOfUsers } from './access';
import { assertDocumentsWritable, documentsIn, transactGuarded } from './document-locks';

export interface NotificationContent {
  actionUser?: NotificationUser;
  displayHeadlineMessageTemplate?: string;
  displayHeadlineMessageTemplateData?: Record<string, unknown>;
  displayBodyMessage?: string;
  notificationSource?: string;
  notificationSourceData?: Record<string, unknown>;
}

export interface AddNotificationInput extends NotificationContent {
  organizationId: string;
  actionUser: NotificationUser;
  displayHeadlineMessageTemplate: string;
  documentId: string;
  createOrganization?: boolean;
  createDocument?: boolean;
  locationId?: string;
  notificationId?: string;
  notifyUsers?: NotificationUser[];
  notifyAll?: boolean;
  verifyUserPermissions?: boolean;
  /** (ext) `<group>.<action>`: its email trigger decides whether the notification is emailed. */
  eventType?: string;
}

/** Every organization-level member (the organization's contact list), paging through the level partition. */
export async function organizationMembers(apiKeyId: string, organizationId: string): Promise<string[]> {
  const userIds: string[] = [];
  let after: string | undefined;
  do {
    const page = await queryLevelMembers(apiKeyId, organizationId, { type: 'organization' }, 1000, after);
    userIds.push(...page.items.map((member) => member.userId));
    after = page.after;
  } while (after);
  return userIds;
}

/** Keeps the users with effective access to the document (docs/decisions.md §4), in chunks to bound each BatchGet set. */
async function withAccess(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  userIds: string[],
): Promise<string[]> {
  const kept: string[] = [];
  for (let i = 0; i < userIds.length; i += 500) {
    const chunk = userIds.slice(i, i + 500);
    const access = await accessOfUsers(apiKeyId, organizationId, documentId, chunk);
    kept.push(...chunk.filter((userId) => access.get(userId) !== null));
  }
  return kept;
}

/**
 * Adds the notification, or updates the one with the same id (its timestamp and read state are kept, new
 * recipients are added). Feed entries are written first, then the notification item in one transaction with what
 * it creates (organization, document) and its document's migration-lock check, so an interrupted request never
 * shows a notification whose delivery is missing. When that last step fails, the feed entries this request added
 * are taken back before the error is answered: a failed request leaves no entry in anyone's feed (should taking
 * them back fail too, a retry with the same id completes the delivery). Throws NotFoundError for a missing
 * organization or document without the matching create flag, FailedPreconditionError when the document is being
 * migrated.
 */
export async function addNotification(
  apiKeyId: string,
  input: AddNotificationInput,
  now = Date.now(),
): Promise<string> {
  const document = documentsIn(input.organizationId, [input.documentId]);
  await assertDocumentsWritable(apiKeyId, document);
  const structure: TransactItem[] = [];
  if (!(await organizationExists(apiKeyId, input.organizationId))) {
    if (!input.createOrganization) throw new NotFoundError('Organization not found.');
    structure.push(ensureOrganizationItem(apiKeyId, input.organizationId, now));
  }
  if (!(await getDocument(apiKeyId, input.organizationId, input.documentId))) {
    if (!input.createDocument) throw new NotFoundError('Document not found.');
    structure.push(upsertDocumentItem(apiKeyId, input.organizationId, input.documentId, {}, now));
  }
  const id = input.notificationId ?? newId('ntf_');
  const existing =
    input.notificationId === undefined ? undefined : await getNotification(apiKeyId, input.organizationId, id);
  const named = (input.notifyUsers ?? []).map((user) => user.userId);
  // notifyAll reaches the organization's members; the acting user is not notified of their own action.
  const everyone = input.notifyAll
    ? (await organizationMembers(apiKeyId, input.organizationId)).filter((u) => u !== input.actionUser?.userId)
    : [];
  let recipients = [...new Set([...named, ...everyone])];
  if (input.verifyUserPermissions)
    recipients = await withAccess(apiKeyId, input.organizationId, input.documentId, recipients);

  const notification: Omit<NotificationRecord, 'readByUserIds'> = {
    id,
    organizationId: input.organizationId,
    documentId: input.documentId,
    locationId: input.locationId,
    actionUser: input.actionUser,
    displayHeadlineMessageTemplate: input.displayHeadlineMessageTemplate,
    displayHeadlineMessageTemplateData: input.displayHeadlineMessageTemplateData,
    displayBodyMessage: input.displayBodyMessage,
    notificationSource: input.notificationSource,
    notificationSourceData: input.notificationSourceData,
    notifyUsers: input.notifyUsers ?? [],
    notifyAll: input.notifyAll ?? false,
    ...(input.eventType === undefined ? {} : { eventType: input.eventType }),
    timestamp: existing?.timestamp ?? now,
    addedAt: now,
  };
  // The recipients whose feed already holds it (an update): their entries are not this request's to take back.
  const delivered =
    existing === undefined ? new Set<string>() : await existingFeedEntries(apiKeyId, existing, recipients);
  const added = recipients.filter((userId) => !delivered.has(userId));
  const readBy = existing && existing.readByUserIds.length > 0 ? { readBy: new Set(existing.readByUserIds) } : {};
  await feedsThenNotification(
    {
      apply: recipients.map((userId) => putRequest(feedEntryItem(apiKeyId, notification, userId))),
      undo: added.map((userId) => deleteRequest(feedEntryKey(apiKeyId, notification, userId))),
    },
    () =>
      transactGuarded(
        apiKeyId,
        [...structure, putItem({ ...notificationItem(apiKeyId, notification), ...readBy })],
        document,
      ),
  );
  return id;
}

/** Feed-entry writes, and what puts the feeds back as they were. */
interface FeedChange {
  apply: WriteRequest[];
  undo: WriteRequest[];
}

/**
 * Writes the feed entries, then the notification (`write`); when either fails, undoes the feed change, so a
 * notification and its recipients' feeds never disagree after a failed request. Feeds go first because a feed
 * entry whose notification is missing shows nothing, while a notification without its entries would be missed.
 */
async function feedsThenNotification(feeds: FeedChange, write: () => Promise<void>): Promise<void> {
  try {
    await batchWrite(feeds.apply);
    await write();
  } catch (error) {
    await batchWrite(feeds.undo).catch((cleanup: unknown) => {
      logger.error(
        'could not put back the feeds of a failed notification write',
        cleanup instanceof Error ? cleanup : String(cleanup),
      );
    });
    throw error;
  }
}

/** Taking `userIds`' entries of `notification` out of their feeds, and putting them back. */
const feedRemoval = (apiKeyId: string, notification: NotificationRecord, userIds: readonly string[]): FeedChange => ({
  apply: userIds.map((userId) => deleteRequest(feedEntryKey(apiKeyId, notification, userId))),
  undo: userIds.map((userId) => putRequest(feedEntryItem(apiKeyId, notification, userId))),
});

export interface GetNotificationsInput {
  organizationId: string;
  documentId?: string;
  userId?: string;
  locationId?: string;
  notificationIds?: string[];
  order?: 'asc' | 'desc';
  pageSize: number;
  pageToken?: string;
}

/** A notification as the API shows it (docs/decisions.md §6). */
export function presentNotification(apiKeyId: string, n: NotificationRecord) {
  return {
    id: n.id,
    notificationSource: n.notificationSource,
    notificationSourceData: n.notificationSourceData,
    actionUser: n.actionUser,
    displayHeadlineMessageTemplate: n.displayHeadlineMessageTemplate,
    displayHeadlineMessageTemplateData: n.displayHeadlineMessageTemplateData,
    displayBodyMessage: n.displayBodyMessage,
    notifyUsers: n.notifyUsers,
    readByUserIds: n.readByUserIds,
    metadata: {
      apiKey: apiKeyId,
      organizationId: n.organizationId,
      documentId: n.documentId,
      ...(n.locationId === undefined ? {} : { locationId: n.locationId }),
    },
    timestamp: n.timestamp,
  };
}

function matches(n: NotificationRecord, input: GetNotificationsInput): boolean {
  return (
    (input.documentId === undefined || n.documentId === input.documentId) &&
    (input.locationId === undefined || n.locationId === input.locationId)
  );
}

/**
 * One page of notifications, newest first unless `order: 'asc'`: a user's feed, a document's or the
 * organization's timeline, or the named notifications. A location (or a document on a feed) filters the timeline
 * within a read budget: the page may be short, even empty, and still carry a token (shared/db/query.ts).
 * Throws InvalidArgumentError for a foreign page token.
 */
export async function listNotifications(apiKeyId: string, input: GetNotificationsInput) {
  const { pageToken, pageSize: _size, ...query } = input;
  const scope = {
    tenant: apiKeyId,
    query: {
      operation: 'notifications/get',
      ...query,
      notificationIds: query.notificationIds ? [...query.notificationIds].sort() : undefined,
    },
  };
  const after = await readPageAfter(pageToken, scope);
  const ascending = input.order === 'asc';
  let ordered: NotificationRecord[];
  let next: string | undefined;
  if (input.notificationIds !== undefined) {
    const found = [
      ...(
        await getNotifications(apiKeyId, input.organizationId, input.notificationIds, { consistent: false })
      ).values(),
    ];
    let candidates = found.filter((n) => matches(n, input));
    if (input.userId !== undefined) {
      const userId = input.userId;
      const inFeed = await Promise.all(
        candidates.map(async (n) => (await existingFeedEntries(apiKeyId, n, [userId])).has(userId)),
      );
      candidates = candidates.filter((_, i) => inFeed[i]);
    }
    const sorted = candidates
      .map((n) => ({ n, key: timelineKey(n.timestamp, n.id) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1) * (ascending ? 1 : -1))
      .filter((entry) => after === undefined || (ascending ? entry.key > after : entry.key < after));
    const page = cutPage(sorted, input.pageSize, (entry) => entry.key);
    ordered = page.items.map((entry) => entry.n);
    next = page.after;
  } else {
    const source: TimelineSource =
      input.userId !== undefined
        ? { kind: 'feed', userId: input.userId, documentId: input.documentId, locationId: input.locationId }
        : input.documentId !== undefined
          ? { kind: 'document', documentId: input.documentId, locationId: input.locationId }
          : { kind: 'organization', locationId: input.locationId };
    const page = await queryTimeline(apiKeyId, input.organizationId, source, {
      limit: input.pageSize,
      ascending,
      after,
    });
    const found = await getNotifications(apiKeyId, input.organizationId, page.items, { consistent: false });
    ordered = page.items.map((id) => found.get(id)).filter((n): n is NotificationRecord => n !== undefined);
    next = page.after;
  }
  return {
    notifications: ordered.map((n) => presentNotification(apiKeyId, n)),
    pageToken: await pageTokenAfter(scope, next),
  };
}

export interface NotificationUpdate extends NotificationContent {
  id: string;
  readByUserIds?: string[];
  persistReadForUsers?: boolean;
}

export interface UpdateNotificationsInput {
  organizationId: string;
  documentId?: string;
  locationId?: string;
  userId?: string;
  verifyUserPermissions?: boolean;
  notifications: NotificationUpdate[];
}

/**
 * Updates content and read state. `readByUserIds` only adds readers; without `persistReadForUsers` the
 * notification also leaves those readers' feeds ("For You"). With `verifyUserPermissions`, only readers with
 * access to the document are marked. A notification outside the named document or location is not found.
 * Throws FailedPreconditionError (nothing written) when the document of a notification is being migrated.
 */
export async function updateNotifications(apiKeyId: string, input: UpdateNotificationsInput): Promise<BatchResult> {
  const found = await getNotifications(
    apiKeyId,
    input.organizationId,
    input.notifications.map((n) => n.id),
  );
  await assertDocumentsWritable(
    apiKeyId,
    documentsIn(input.organizationId, [input.documentId, ...[...found.values()].map((n) => n.documentId)]),
  );
  return settleEach(
    input.notifications,
    (update) => update.id,
    async (update) => {
      const stored = found.get(update.id);
      if (
        !stored ||
        (input.documentId !== undefined && stored.documentId !== input.documentId) ||
        (input.locationId !== undefined && stored.locationId !== input.locationId)
      ) {
        return { success: false, message: 'Notification does not exist.' };
      }
      let readers = [...new Set(update.readByUserIds ?? [])];
      if (input.verifyUserPermissions && readers.length > 0)
        readers = await withAccess(apiKeyId, input.organizationId, stored.documentId, readers);
      const { id, readByUserIds: _r, persistReadForUsers, notificationSource: _s, ...changes } = update;
      // Only entries that are there are taken out (and so put back if the update fails).
      const leaving =
        !persistReadForUsers && readers.length > 0 ? [...(await existingFeedEntries(apiKeyId, stored, readers))] : [];
      await feedsThenNotification(feedRemoval(apiKeyId, stored, leaving), () =>
        transactGuarded(
          apiKeyId,
          [updateNotificationItem(apiKeyId, input.organizationId, id, changes, readers)],
          documentsIn(input.organizationId, [stored.documentId]),
        ),
      );
      return { success: true, message: 'Notification updated.' };
    },
  );
}

export interface DeleteNotificationsInput {
  organizationId: string;
  documentId?: string;
  locationId?: string;
  userId?: string;
  notificationIds?: string[];
}

/**
 * Every notification the filters select (the named ones, a feed, a document's or the organization's timeline).
 * Unlike Get Notifications this must see the whole selection (a delete that stopped at a read budget would leave
 * matches behind and report success), so it follows the timeline's cursor to the end: a filtered read may come
 * back short or empty with a cursor and is simply continued. Each Query is still bounded (at most 5,000 entries
 * and DynamoDB's 1 MB page, see shared/db/query.ts); the request as a whole costs the timeline it reads.
 */
async function selected(apiKeyId: string, input: DeleteNotificationsInput): Promise<NotificationRecord[]> {
  if (input.notificationIds !== undefined) {
    const found = await getNotifications(apiKeyId, input.organizationId, input.notificationIds);
    return [...found.values()].filter((n) => matches(n, { ...input, pageSize: 0 }));
  }
  const source: TimelineSource =
    input.userId !== undefined
      ? { kind: 'feed', userId: input.userId, documentId: input.documentId, locationId: input.locationId }
      : input.documentId !== undefined
        ? { kind: 'document', documentId: input.documentId, locationId: input.locationId }
        : { kind: 'organization', locationId: input.locationId };
  const ids: string[] = [];
  let after: string | undefined;
  do {
    const page = await queryTimeline(apiKeyId, input.organizationId, source, { limit: 1000, ascending: true, after });
    ids.push(...page.items);
    after = page.after;
  } while (after);
  return [...(await getNotifications(apiKeyId, input.organizationId, ids)).values()];
}

/**
 * Deletes the selected notifications with every feed entry, or — with `userId` — removes them from that user's
 * feed only, leaving other recipients' feeds intact (docs/decisions.md §6). The caller has refused an organization-only
 * request. Throws FailedPreconditionError (nothing written) when a document concerned is being migrated.
 */
export async function deleteNotifications(apiKeyId: string, input: DeleteNotificationsInput): Promise<BatchResult> {
  const notifications = await selected(apiKeyId, input);
  await assertDocumentsWritable(
    apiKeyId,
    documentsIn(input.organizationId, [input.documentId, ...notifications.map((n) => n.documentId)]),
  );
  const result: BatchResult = {};
  for (const id of input.notificationIds ?? [])
    result[id] = { success: false, message: 'Notification does not exist.' };
  const guard = (n: NotificationRecord) => documentsIn(input.organizationId, [n.documentId]);
  return Object.assign(
    result,
    await settleEach(
      notifications,
      (n) => n.id,
      async (n) => {
        if (input.userId !== undefined) {
          const inFeed = (await existingFeedEntries(apiKeyId, n, [input.userId])).has(input.userId);
          if (inFeed) await transactGuarded(apiKeyId, [deleteItem(feedEntryKey(apiKeyId, n, input.userId))], guard(n));
          return inFeed
            ? { success: true, message: 'Notification removed for the user.' }
            : { success: false, message: "Notification is not in the user's feed." };
        }
        const recipients = await listRecipients(apiKeyId, input.organizationId, n.id);
        await feedsThenNotification(feedRemoval(apiKeyId, n, recipients), () =>
          transactGuarded(apiKeyId, [deleteItem(notificationKey(apiKeyId, input.organizationId, n.id))], guard(n)),
        );
        return { success: true, message: 'Notification deleted.' };
      },
    ),
  );
}
