/**
 * Who is emailed about a notification (docs/decisions.md §12), planned by the events worker when the stream shows a
 * notification added (INSERT) or re-added (a MODIFY with a new `addedAt`; updates and read marks keep it).
 *
 * For an API key whose email service is on, each recipient of the notification (a user whose feed holds it: those
 * named in `notifyUsers` and, with `notifyAll`, the organization's members, as Add Notification wrote their feeds)
 * gets one email item in the email log (shared/db/email-log.ts), `pending` with a send job on the delivery queue,
 * or `skipped` with the reason:
 * - the acting user;
 * - the notification's `eventType` whose trigger in the email configuration is not `true`;
 * - the email configuration without `fromEmail`;
 * - an email level (document entry, then organization entry, then ALL) of `NONE`, or `MINE` while the recipient
 *   was reached only through `notifyAll`;
 * - no email address (the `email` of its `notifyUsers` object, else the user's profile), or one that is not an
 *   address.
 * The email id is derived from the notification and recipient, so a re-add emails only its new recipients and a
 * notification seen twice makes no second email. An API key with the email service off gets nothing written.
 */
import { forEachLimited } from '../../core/concurrency';
import { derivedId } from '../../core/ids';
import { memoizedByKey } from '../../core/memo';
import type { JobQueue } from '../../adapters/queue/queue';
import { feedEntryKey, toNotification, type NotificationRecord } from '../../db/notification';
import { batchGet, keyOfItem, keyString } from '../../db/batch';
import { config } from '../../core/config';
import { getEmailConfig, type EmailConfigRecord } from '../../db/email-config';
import { createEmails, type EmailTransportName, type StoredEmail } from '../../db/email-log';
import type { ItemChange } from '../../db/item-change';
import { getProfiles } from '../../db/profile';
import { effectiveConfigs } from '../notification-config';
import { organizationMembers } from '../notifications';
import { enqueue, type DeliveryJob } from '../delivery/jobs';
import { renderSubject } from './render';

export const EMAIL_ID_PREFIX = 'eml_';

/** A notification added or re-added, as the stream showed it. */
export interface NotificationAdded {
  apiKeyId: string;
  notification: NotificationRecord;
}

/** The notification a stream record adds or re-adds, or undefined for any other change. */
export function notificationAddedOf(record: ItemChange): NotificationAdded | undefined {
  const item = record.newImage;
  const apiKeyId = record.apiKeyId;
  if (item === undefined || record.kind !== 'notification' || apiKeyId === undefined) return undefined;
  if (record.eventName === 'MODIFY' && (item.addedAt === undefined || record.oldImage?.addedAt === item.addedAt))
    return undefined;
  return { apiKeyId, notification: toNotification(item) };
}

/** The email id of a notification and recipient. */
export const emailIdOf = (
  apiKeyId: string,
  notification: Pick<NotificationRecord, 'organizationId' | 'id'>,
  userId: string,
) => derivedId(EMAIL_ID_PREFIX, apiKeyId, notification.organizationId, notification.id, userId);

/** The transport the key's configuration sends with: SendGrid for `sendgrid` and `custom`, else the service's own. */
export function transportOf(emailConfig: EmailConfigRecord): EmailTransportName {
  const type = emailConfig.emailServiceConfig.type ?? 'default';
  if (type !== 'default') return 'sendgrid';
  return config.emailMailboxDir !== undefined ? 'mailbox' : 'ses';
}

const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The users whose feed holds the notification: those it names and, with notifyAll, the organization's members. */
async function recipientsOf(apiKeyId: string, notification: NotificationRecord): Promise<string[]> {
  const named = notification.notifyUsers.map((user) => user.userId);
  const candidates = [
    ...new Set([
      ...named,
      ...(notification.notifyAll ? await organizationMembers(apiKeyId, notification.organizationId) : []),
    ]),
  ];
  // Add Notification wrote the feeds before the notification: a strongly consistent read of the candidates' feed
  // entries finds exactly its recipients (verifyUserPermissions and a member who joined since are both accounted for).
  const entries = await batchGet(
    candidates.map((userId) => feedEntryKey(apiKeyId, notification, userId)),
    { consistent: true },
  );
  const present = new Set(entries.map((item) => keyString(keyOfItem(item))));
  return candidates.filter((userId) => present.has(keyString(feedEntryKey(apiKeyId, notification, userId))));
}

/** The email item of each recipient: pending, or skipped with the reason. */
export async function emailsFor(
  apiKeyId: string,
  notification: NotificationRecord,
  emailConfig: EmailConfigRecord,
  now: number,
): Promise<StoredEmail[]> {
  const recipients = await recipientsOf(apiKeyId, notification);
  if (recipients.length === 0) return [];
  const named = new Map(notification.notifyUsers.map((user) => [user.userId, user]));
  const levels = await effectiveConfigs(apiKeyId, notification.organizationId, recipients, notification.documentId);
  const withoutAddress = recipients.filter((userId) => named.get(userId)?.email === undefined);
  const profiles =
    withoutAddress.length > 0 ? await getProfiles(apiKeyId, withoutAddress) : new Map<string, { email?: string }>();
  const settings = emailConfig.emailServiceConfig;
  const trigger = notification.eventType;
  const subject = renderSubject(
    notification.displayHeadlineMessageTemplate,
    notification.displayHeadlineMessageTemplateData,
  );
  const transport = transportOf(emailConfig);

  return recipients.map((userId): StoredEmail => {
    const to = (named.get(userId)?.email ?? profiles.get(userId)?.email ?? '').trim();
    const level = levels.get(userId)?.email ?? 'ALL';
    const reason =
      userId === notification.actionUser.userId
        ? 'The recipient is the acting user.'
        : trigger !== undefined && settings.triggers?.[trigger] !== true
          ? `The email trigger for ${trigger} is off.`
          : settings.fromEmail === undefined || settings.fromEmail === ''
            ? 'The email configuration has no fromEmail.'
            : level === 'NONE'
              ? "The recipient's email level is NONE."
              : level === 'MINE' && !named.has(userId)
                ? "The recipient's email level is MINE and the notification reached them only through notifyAll."
                : to === ''
                  ? 'No email address is known for the recipient.'
                  : !ADDRESS.test(to)
                    ? "The recipient's email address is not valid."
                    : undefined;
    return {
      id: emailIdOf(apiKeyId, notification, userId),
      notificationId: notification.id,
      organizationId: notification.organizationId,
      userId,
      to,
      subject,
      status: reason === undefined ? 'pending' : 'skipped',
      ...(reason === undefined ? { nextAttemptAt: now } : { reason }),
      transport,
      attempts: 0,
      timestamp: now,
    };
  });
}

const firstAttempt = (apiKeyId: string, emailId: string, now: number): DeliveryJob => ({
  kind: 'email',
  apiKeyId,
  emailId,
  attempt: 1,
  dueAt: now,
});

/**
 * Plans and logs the emails of one added notification, and queues a send job for each pending one. A notification
 * seen again writes nothing new: its emails exist, and those not attempted yet are queued again (in case the first
 * run stopped before queueing them).
 */
export async function planEmails(
  added: NotificationAdded,
  emailConfig: EmailConfigRecord,
  queue: JobQueue,
  now = Date.now(),
): Promise<void> {
  const { apiKeyId, notification } = added;
  const emails = await emailsFor(apiKeyId, notification, emailConfig, now);
  const existing = await createEmails(apiKeyId, emails);
  const seen = new Set(existing.map((email) => email.id));
  const jobs = [
    ...emails.filter((email) => !seen.has(email.id) && email.status === 'pending'),
    ...existing.filter((email) => email.status === 'pending' && email.attempts === 0),
  ].map((email) => firstAttempt(apiKeyId, email.id, now));
  await enqueue(queue, jobs, now);
}

/** Notifications planned at once in one stream batch (each reads its recipients' settings and profiles). */
const PLAN_CONCURRENCY = 4;

/**
 * Plans the emails of a stream batch's added notifications, reading each key's email configuration once. Returns
 * the notifications that could not be planned, with why; the worker reports their records back to the stream
 * (planning again is harmless: email ids are derived).
 */
export async function planEmailBatch(
  added: readonly NotificationAdded[],
  queue: JobQueue,
  now = Date.now(),
): Promise<Map<NotificationAdded, unknown>> {
  const failed = new Map<NotificationAdded, unknown>();
  const enabledConfig = memoizedByKey(async (apiKeyId): Promise<EmailConfigRecord | undefined> => {
    const stored = await getEmailConfig(apiKeyId);
    return stored?.config.useEmailService === true ? stored.config : undefined;
  });
  await forEachLimited(added, PLAN_CONCURRENCY, async (entry) => {
    try {
      const emailConfig = await enabledConfig(entry.apiKeyId);
      if (emailConfig !== undefined) await planEmails(entry, emailConfig, queue, now);
    } catch (error) {
      failed.set(entry, error);
    }
  });
  return failed;
}
