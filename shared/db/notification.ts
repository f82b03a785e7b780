/**
 * Notifications, their recipients' feeds, and users' notification settings (O = T#<key>#ORG#<org>):
 *
 *   pk O                       sk NOTIF#<id>          the notification (content, recipients given, readByUserIds)
 *      gsi1: O#NOTIFS / <ts>#<id>                     the organization's notifications in time order
 *      gsi2: O#DOC#<d>#NOTIFS / <ts>#<id>             a document's notifications in time order
 *   pk O#FEED#<user>           sk <ts>#<id>           one entry per recipient: the user's feed ("For You")
 *      gsi3: O#NOTIF#<id>#TO / U#<user>               the recipients whose feed still holds the notification
 *   pk O#NCONFIG#<user>        sk ORG | DOC#<d>       the user's inbox/email levels (organization or document)
 *      gsi1 (documents only): O#DOC#<d>#NCONFIGS / U#<user>   a document's settings (found by document migration)
 *
 * `<ts>` is the creation time in ms, zero-padded, so every timeline reads in time order at the cost of its page.
 * A feed entry carries the document and location of its notification so feed filters need no second read.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, type Item, type ItemKey } from './batch';
import { mapPage, queryAll, readPage, type Page, type QuerySpec } from './query';
import { TABLE_NAME, db } from './client';
import { fromJsonAttribute, toJsonAttribute } from './json-attribute';
import { key, segment, sortableNumber } from './keys';
import { organizationPartition } from './organization';
import { NotFoundError } from '../core/errors';
import { named, type TransactItem } from './transact';

export interface NotificationUser {
  userId: string;
  name?: string;
  email?: string;
}

export interface NotificationRecord {
  id: string;
  organizationId: string;
  documentId: string;
  locationId?: string;
  /** Required by Add Notification, and an update never removes it: every stored notification has one. */
  actionUser: NotificationUser;
  displayHeadlineMessageTemplate: string;
  displayHeadlineMessageTemplateData?: Record<string, unknown>;
  displayBodyMessage?: string;
  notificationSource?: string;
  notificationSourceData?: Record<string, unknown>;
  /** The recipients the caller named (notifyAll recipients are only in feeds). */
  notifyUsers: NotificationUser[];
  notifyAll: boolean;
  readByUserIds: string[];
  /** (ext) `<group>.<action>`, when the caller named one: its email trigger applies (docs/decisions.md §12). */
  eventType?: string;
  /** Creation time, ms. */
  timestamp: number;
  /**
   * When Add Notification last wrote it, ms: a re-add changes it, an update or a read mark does not, so the email
   * planner (shared/domain/email/plan.ts) tells a re-add in the stream from the other changes.
   */
  addedAt?: number;
}

export const CONFIG_LEVELS = ['ALL', 'MINE', 'NONE'] as const;
export type ConfigLevel = (typeof CONFIG_LEVELS)[number];
export interface NotificationConfig {
  inbox: ConfigLevel;
  email: ConfigLevel;
}

/** A position in a timeline: `<ts>#<id>` — the sort key of feeds and the gsi sort key of notifications. */
export const timelineKey = (timestamp: number, id: string) => key(sortableNumber(timestamp), segment(id));

export const notificationKey = (apiKeyId: string, organizationId: string, id: string): ItemKey => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: key('NOTIF', segment(id)),
});
const organizationTimeline = (apiKeyId: string, organizationId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'NOTIFS');
const documentTimeline = (apiKeyId: string, organizationId: string, documentId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'DOC', segment(documentId), 'NOTIFS');
const feedPartition = (apiKeyId: string, organizationId: string, userId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'FEED', segment(userId));
export const feedEntryKey = (
  apiKeyId: string,
  notification: Pick<NotificationRecord, 'organizationId' | 'id' | 'timestamp'>,
  userId: string,
): ItemKey => ({
  pk: feedPartition(apiKeyId, notification.organizationId, userId),
  sk: timelineKey(notification.timestamp, notification.id),
});
const configKey = (apiKeyId: string, organizationId: string, userId: string, documentId?: string): ItemKey => ({
  pk: key(organizationPartition(apiKeyId, organizationId), 'NCONFIG', segment(userId)),
  sk: documentId === undefined ? 'ORG' : key('DOC', segment(documentId)),
});

/** The free-form fields, stored as JSON strings (shared/db/json-attribute.ts). */
const JSON_FIELDS = ['displayHeadlineMessageTemplateData', 'notificationSourceData'] as const;

export function toNotification(item: Item): NotificationRecord {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, readBy, ...rest } = item;
  const readByUserIds = readBy instanceof Set ? [...(readBy as Set<string>)].sort() : [];
  const notification = { ...(rest as unknown as Omit<NotificationRecord, 'readByUserIds'>), readByUserIds };
  for (const field of JSON_FIELDS) {
    if (field in notification) notification[field] = fromJsonAttribute(notification[field]);
  }
  return notification;
}

/** The stored form of notification content: free-form fields as JSON strings. */
function storedContent<T extends Partial<Pick<NotificationRecord, (typeof JSON_FIELDS)[number]>>>(
  content: T,
): Record<string, unknown> {
  const stored: Record<string, unknown> = { ...content };
  for (const field of JSON_FIELDS) {
    if (content[field] !== undefined) stored[field] = toJsonAttribute(content[field]);
  }
  return stored;
}

/** The whole notification item (a Put replaces content; read state lives in the `readBy` set, kept apart). */
export function notificationItem(apiKeyId: string, notification: Omit<NotificationRecord, 'readByUserIds'>): Item {
  return {
    ...notificationKey(apiKeyId, notification.organizationId, notification.id),
    ...storedContent(notification),
    gsi1pk: organizationTimeline(apiKeyId, notification.organizationId),
    gsi1sk: timelineKey(notification.timestamp, notification.id),
    gsi2pk: documentTimeline(apiKeyId, notification.organizationId, notification.documentId),
    gsi2sk: timelineKey(notification.timestamp, notification.id),
  };
}

export function feedEntryItem(
  apiKeyId: string,
  notification: NotificationRecord | Omit<NotificationRecord, 'readByUserIds'>,
  userId: string,
): Item {
  return {
    ...feedEntryKey(apiKeyId, notification, userId),
    notificationId: notification.id,
    userId,
    documentId: notification.documentId,
    locationId: notification.locationId,
    gsi3pk: recipientsPartition(apiKeyId, notification.organizationId, notification.id),
    gsi3sk: key('U', segment(userId)),
  };
}

export async function getNotification(
  apiKeyId: string,
  organizationId: string,
  id: string,
): Promise<NotificationRecord | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: notificationKey(apiKeyId, organizationId, id), ConsistentRead: true }),
  );
  return Item ? toNotification(Item) : undefined;
}

/** The notifications among `ids` that exist, keyed by id. */
export async function getNotifications(
  apiKeyId: string,
  organizationId: string,
  ids: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, NotificationRecord>> {
  const items = await batchGet(
    ids.map((id) => notificationKey(apiKeyId, organizationId, id)),
    options,
  );
  return new Map(items.map(toNotification).map((n) => [n.id, n]));
}

/**
 * Marks the notification read for `userIds` (added to a set: never removed) and applies `changes` to its content,
 * inside a transaction; fails its condition when the notification does not exist.
 */
export function updateNotificationItem(
  apiKeyId: string,
  organizationId: string,
  id: string,
  changes: Partial<
    Pick<
      NotificationRecord,
      | 'actionUser'
      | 'displayHeadlineMessageTemplate'
      | 'displayHeadlineMessageTemplateData'
      | 'displayBodyMessage'
      | 'notificationSourceData'
    >
  >,
  readBy: readonly string[],
): TransactItem {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  for (const [field, value] of Object.entries(storedContent(changes))) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  const clauses = [
    sets.length > 0 ? `SET ${sets.join(', ')}` : '',
    readBy.length > 0 ? 'ADD readBy :readBy' : '',
  ].filter(Boolean);
  if (readBy.length > 0) values[':readBy'] = new Set(readBy);
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: notificationKey(apiKeyId, organizationId, id),
        UpdateExpression: clauses.length > 0 ? clauses.join(' ') : 'SET organizationId = organizationId',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
        ExpressionAttributeValues: Object.keys(values).length > 0 ? values : undefined,
      },
    },
    () => new NotFoundError('Notification does not exist.'),
  );
}

export type TimelineSource =
  | { kind: 'feed'; userId: string; documentId?: string; locationId?: string }
  | { kind: 'document'; documentId: string; locationId?: string }
  | { kind: 'organization'; locationId?: string };

/**
 * One page of notification ids from a timeline, newest first unless `ascending`, after the timeline key `after`
 * (the page's `after` is where the next page starts). Without a filter pages are full except the last. A location
 * (or, for feeds, a document) narrows the page with a FilterExpression, read within the budget of bounded reads
 * (shared/db/query.ts): a page may be short, even empty, and continues after the last entry examined, so no
 * notification is skipped or repeated.
 */
export async function queryTimeline(
  apiKeyId: string,
  organizationId: string,
  source: TimelineSource,
  options: { limit: number; ascending: boolean; after?: string },
): Promise<Page<string>> {
  const onFeed = source.kind === 'feed';
  const [index, partition] =
    source.kind === 'feed'
      ? [undefined, feedPartition(apiKeyId, organizationId, source.userId)]
      : source.kind === 'document'
        ? ['gsi2', documentTimeline(apiKeyId, organizationId, source.documentId)]
        : ['gsi1', organizationTimeline(apiKeyId, organizationId)];
  const filters: string[] = [];
  const values: Record<string, unknown> = {};
  if (source.kind === 'feed' && source.documentId !== undefined) {
    filters.push('documentId = :documentId');
    values[':documentId'] = source.documentId;
  }
  if (source.locationId !== undefined) {
    filters.push('locationId = :locationId');
    values[':locationId'] = source.locationId;
  }
  const filter = filters.length > 0 ? { expression: filters.join(' AND '), values } : undefined;
  const page = await readPage(
    { index, partition, ascending: options.ascending, filter },
    { size: options.limit, after: options.after },
  );
  return mapPage(page, (item) => String(onFeed ? item.notificationId : item.id));
}

/** Every feed entry of the notification's timeline position for these users that exists. */
export async function existingFeedEntries(
  apiKeyId: string,
  notification: NotificationRecord,
  userIds: readonly string[],
): Promise<Set<string>> {
  const items = await batchGet(userIds.map((userId) => feedEntryKey(apiKeyId, notification, userId)));
  return new Set(items.map((item) => String(item.userId)));
}

const recipientsPartition = (apiKeyId: string, organizationId: string, id: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'NOTIF', segment(id), 'TO');

/** The users whose feed still holds the notification (gsi3, paged to the end). */
export async function listRecipients(apiKeyId: string, organizationId: string, id: string): Promise<string[]> {
  const items = await queryAll({
    IndexName: 'gsi3',
    KeyConditionExpression: 'gsi3pk = :pk',
    ExpressionAttributeValues: { ':pk': recipientsPartition(apiKeyId, organizationId, id) },
    ProjectionExpression: 'userId',
  });
  return items.map((item) => String(item.userId));
}

/** A stored setting holds only the levels that were set; the others fall back (document → organization → ALL). */
export type StoredConfig = Partial<NotificationConfig>;

const documentConfigs = (apiKeyId: string, organizationId: string, documentId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'DOC', segment(documentId), 'NCONFIGS');

export function configItem(
  apiKeyId: string,
  organizationId: string,
  userId: string,
  documentId: string | undefined,
  config: StoredConfig,
): Item {
  return {
    ...configKey(apiKeyId, organizationId, userId, documentId),
    ...config,
    userId,
    documentId,
    ...(documentId === undefined
      ? {}
      : { gsi1pk: documentConfigs(apiKeyId, organizationId, documentId), gsi1sk: key('U', segment(userId)) }),
  };
}

/**
 * Sets the levels `config` gives for the user (at the organization, or at the document) and keeps the others as
 * stored: the level not given is kept without being read, so concurrent requests setting one level each both apply.
 */
export function setConfigItem(
  apiKeyId: string,
  organizationId: string,
  userId: string,
  documentId: string | undefined,
  config: StoredConfig,
): TransactItem {
  const { pk, sk, ...attributes } = configItem(apiKeyId, organizationId, userId, documentId, config);
  const present = Object.entries(attributes).filter(([, value]) => value !== undefined);
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: { pk, sk },
      UpdateExpression: `SET ${present.map((_, i) => `#a${i} = :a${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(present.map(([name], i) => [`#a${i}`, name])),
      ExpressionAttributeValues: Object.fromEntries(present.map(([, value], i) => [`:a${i}`, value])),
    },
  };
}

/**
 * Stored settings of each user at the organization and at each document, keyed by `<userId>\0<documentId>`
 * (documentId '' for the organization): one BatchGet per 100 keys.
 */
export async function getConfigs(
  apiKeyId: string,
  organizationId: string,
  userIds: readonly string[],
  documentIds: readonly string[],
): Promise<Map<string, StoredConfig>> {
  const keys = userIds.flatMap((userId) => [
    configKey(apiKeyId, organizationId, userId),
    ...documentIds.map((d) => configKey(apiKeyId, organizationId, userId, d)),
  ]);
  const items = await batchGet(keys);
  return new Map(
    items.map((item) => [
      `${String(item.userId)}\u0000${String(item.documentId ?? '')}`,
      { inbox: item.inbox as ConfigLevel | undefined, email: item.email as ConfigLevel | undefined },
    ]),
  );
}

/** A document's notifications, through its timeline (gsi2): what document migration moves. */
export function documentNotificationsQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': documentTimeline(apiKeyId, organizationId, documentId) },
  };
}

/**
 * A notification moved to another document id, and the feed entries of the recipients still holding it (they
 * carry the document for feed filters): the same keys, so timelines, read state and feeds keep their order.
 */
export async function notificationMovedTo(apiKeyId: string, item: Item, documentId: string): Promise<Item[]> {
  const notification = { ...toNotification(item), documentId };
  const recipients = await listRecipients(apiKeyId, notification.organizationId, notification.id);
  return [
    { ...item, documentId, gsi2pk: documentTimeline(apiKeyId, notification.organizationId, documentId) },
    ...recipients.map((userId) => feedEntryItem(apiKeyId, notification, userId)),
  ];
}

/** Users' settings at one document (gsi1): what document migration moves. */
export function documentConfigsQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': documentConfigs(apiKeyId, organizationId, documentId) },
  };
}

/** A user's setting at a document as it is at another document id. */
export function configMovedTo(apiKeyId: string, item: Item, organizationId: string, documentId: string): Item {
  const levels: StoredConfig = {
    inbox: item.inbox as ConfigLevel | undefined,
    email: item.email as ConfigLevel | undefined,
  };
  return configItem(apiKeyId, organizationId, String(item.userId), documentId, levels);
}
