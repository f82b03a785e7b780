/**
 * The email log (docs/decisions.md §12): one item per notification and recipient, what was sent or why not, kept
 * 30 days. The item is the email's state too: the send jobs read it and record each attempt's outcome on it.
 *
 *   pk T#<key>#EML#<emailId>   sk EMAIL
 *      gsi1: T#<key>#EMLS / <ts>#<id>                     the tenant's emails, newest first
 *      gsi2: T#<key>#EMLS#NTF#<notificationId> / <ts>#<id>  a notification's emails
 *      gsi3: T#<key>#EMLS#U#<userId> / <ts>#<id>           a user's emails
 *
 * The email id is derived from the API key, organization, notification and user, so a notification and recipient
 * have one email however often the notification is seen or re-added.
 */
import type { EmailTransportName } from '../adapters/email/email-transport';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, batchWrite, getTogether, keyOfItem, keyString, putRequest, type Item, type ItemKey } from './batch';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, segment, sortableNumber, tenantKey } from './keys';
import { readPage, type Page } from './query';
import { TTL_ATTRIBUTE } from './table-definition';

/** Emails are logged this long (docs/decisions.md §12). */
export const EMAIL_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export const EMAIL_STATUSES = ['pending', 'sent', 'failed', 'skipped'] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];
// The transports by name are the adapters' one list.
export type { EmailTransportName };

export interface StoredEmail {
  id: string;
  notificationId: string;
  organizationId: string;
  userId: string;
  /** The recipient's address; empty when none is known (then `skipped`). */
  to: string;
  subject: string;
  status: EmailStatus;
  /** Why it was skipped or failed, or why the last attempt is retried. */
  reason?: string;
  transport: EmailTransportName;
  /** Send attempts made. */
  attempts: number;
  /** Creation, ms. */
  timestamp: number;
  /** ms; set while pending. */
  nextAttemptAt?: number;
  /** Set with an outcome whose next attempt must still be queued (as a webhook delivery's `followUp`). */
  followUp?: boolean;
  /** The provider's id of the sent message (SendGrid's X-Message-Id, SES's MessageId, the mailbox file). */
  providerMessageId?: string;
}

const emailPartition = (apiKeyId: string, emailId: string) => tenantKey(apiKeyId, 'EML', segment(emailId));
const EMAIL_SK = 'EMAIL';
const tenantEmails = (apiKeyId: string) => tenantKey(apiKeyId, 'EMLS');
const notificationEmails = (apiKeyId: string, notificationId: string) =>
  tenantKey(apiKeyId, 'EMLS', 'NTF', segment(notificationId));
const userEmails = (apiKeyId: string, userId: string) => tenantKey(apiKeyId, 'EMLS', 'U', segment(userId));
const position = (timestamp: number, id: string) => key(sortableNumber(timestamp), segment(id));
const expiry = (timestamp: number) => Math.ceil((timestamp + EMAIL_RETENTION_MS) / 1000);

export const emailKey = (apiKeyId: string, emailId: string): ItemKey => ({
  pk: emailPartition(apiKeyId, emailId),
  sk: EMAIL_SK,
});

function emailItem(apiKeyId: string, email: StoredEmail): Item {
  const at = position(email.timestamp, email.id);
  return {
    ...emailKey(apiKeyId, email.id),
    ...email,
    gsi1pk: tenantEmails(apiKeyId),
    gsi1sk: at,
    gsi2pk: notificationEmails(apiKeyId, email.notificationId),
    gsi2sk: at,
    gsi3pk: userEmails(apiKeyId, email.userId),
    gsi3sk: at,
    [TTL_ATTRIBUTE]: expiry(email.timestamp),
  };
}

function toEmail(item: Item): StoredEmail {
  return {
    id: String(item.id),
    notificationId: String(item.notificationId),
    organizationId: String(item.organizationId),
    userId: String(item.userId),
    to: String(item.to),
    subject: String(item.subject),
    status: item.status as EmailStatus,
    ...(typeof item.reason === 'string' ? { reason: item.reason } : {}),
    transport: item.transport as EmailTransportName,
    attempts: Number(item.attempts),
    timestamp: Number(item.timestamp),
    ...(typeof item.nextAttemptAt === 'number' ? { nextAttemptAt: item.nextAttemptAt } : {}),
    ...(item.followUp === true ? { followUp: true } : {}),
    ...(typeof item.providerMessageId === 'string' ? { providerMessageId: item.providerMessageId } : {}),
  };
}

/**
 * Writes the emails that do not exist yet and returns those that did (their notification and recipient were seen
 * before: the caller resumes from what is stored). As with webhook messages (shared/db/webhook-message.ts
 * `createMessages`), one strongly consistent BatchGetItem finds them, then BatchWriteItems write the others: one
 * notification's emails are planned by one events-worker invocation at a time.
 */
export async function createEmails(apiKeyId: string, emails: readonly StoredEmail[]): Promise<StoredEmail[]> {
  if (emails.length === 0) return [];
  const stored = await batchGet(
    emails.map((email) => emailKey(apiKeyId, email.id)),
    { consistent: true },
  );
  const existing = new Set(stored.map((item) => keyString(keyOfItem(item))));
  await batchWrite(
    emails
      .filter((email) => !existing.has(keyString(emailKey(apiKeyId, email.id))))
      .map((email) => putRequest(emailItem(apiKeyId, email))),
  );
  return stored.map(toEmail);
}

/** An email, strongly consistent; one BatchGetItem for the emails of a worker's batch (`getTogether`). */
export async function getEmail(apiKeyId: string, emailId: string): Promise<StoredEmail | undefined> {
  const [item] = await getTogether([emailKey(apiKeyId, emailId)]);
  return item === undefined ? undefined : toEmail(item);
}

/**
 * Claims attempt `email.attempts + 1` for one worker until `until` (ms): true when this caller may send. A second
 * job for the same attempt (a queue handing a job out twice) finds the claim held and does not send; a claim whose
 * worker died lapses at `until`, and the job, handed out again, claims and sends.
 */
export async function claimEmailAttempt(
  apiKeyId: string,
  email: StoredEmail,
  now: number,
  until: number,
): Promise<boolean> {
  const claimed = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: emailKey(apiKeyId, email.id),
        UpdateExpression: 'SET sendingUntil = :until',
        ConditionExpression:
          '#status = :pending AND attempts = :attempts AND (attribute_not_exists(sendingUntil) OR sendingUntil < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':pending': 'pending', ':attempts': email.attempts, ':now': now, ':until': until },
      }),
    ),
  );
  return claimed !== undefined;
}

/** An attempt's outcome, as the email is after it. */
export interface EmailOutcome {
  status: 'pending' | 'sent' | 'failed';
  reason?: string;
  nextAttemptAt?: number;
  providerMessageId?: string;
  followUp: boolean;
}

/**
 * Records the outcome of attempt `email.attempts + 1` of a pending email that still stands at `email.attempts`:
 * a second worker handed the same job finds the condition false (false returned) and stops.
 */
export async function recordEmailOutcome(
  apiKeyId: string,
  email: StoredEmail,
  outcome: EmailOutcome,
): Promise<boolean> {
  const sets = ['#status = :status', 'attempts = :next'];
  const removes: string[] = ['sendingUntil'];
  const values: Record<string, unknown> = {
    ':status': outcome.status,
    ':next': email.attempts + 1,
    ':attempts': email.attempts,
    ':pending': 'pending',
  };
  const optional = {
    reason: outcome.reason,
    nextAttemptAt: outcome.nextAttemptAt,
    providerMessageId: outcome.providerMessageId,
    followUp: outcome.followUp ? true : undefined,
  };
  for (const [name, value] of Object.entries(optional)) {
    if (value === undefined) removes.push(name);
    else {
      sets.push(`${name} = :${name}`);
      values[`:${name}`] = value;
    }
  }
  const recorded = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: emailKey(apiKeyId, email.id),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: '#status = :pending AND attempts = :attempts',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: values,
      }),
    ),
  );
  return recorded !== undefined;
}

/** Clears `followUp` once the next attempt's job is queued (only while the email stands at `attempts`). */
export async function clearEmailFollowUp(apiKeyId: string, emailId: string, attempts: number): Promise<void> {
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: emailKey(apiKeyId, emailId),
        UpdateExpression: 'REMOVE followUp',
        ConditionExpression: 'attempts = :attempts',
        ExpressionAttributeValues: { ':attempts': attempts },
      }),
    ),
  );
}

export interface EmailListing {
  notificationId?: string;
  userId?: string;
}

/**
 * One page of the tenant's emails, newest first: a notification's (filtered by user when both are given), a
 * user's, or all. `after` is the position to go on from.
 */
export async function queryEmails(
  apiKeyId: string,
  listing: EmailListing,
  page: { size: number; after?: string },
): Promise<Page<StoredEmail>> {
  const partition =
    listing.notificationId !== undefined
      ? { index: 'gsi2', partition: notificationEmails(apiKeyId, listing.notificationId) }
      : listing.userId !== undefined
        ? { index: 'gsi3', partition: userEmails(apiKeyId, listing.userId) }
        : { index: 'gsi1', partition: tenantEmails(apiKeyId) };
  const filter =
    listing.notificationId !== undefined && listing.userId !== undefined
      ? { expression: '#user = :user', names: { '#user': 'userId' }, values: { ':user': listing.userId } }
      : undefined;
  const found = await readPage({ ...partition, ascending: false, ...(filter === undefined ? {} : { filter }) }, page);
  return { items: found.items.map(toEmail), ...(found.after === undefined ? {} : { after: found.after }) };
}
