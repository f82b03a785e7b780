/**
 * The email log as customers read it (docs/decisions.md §12, (ext) `/v2/workspace/emails/get`): the tenant's
 * emails newest first, all of them, a notification's, a user's, or one notification's email to one user. Only the
 * API key's own partitions are read, so another key's emails are never listed.
 */
import { queryEmails, type EmailListing, type StoredEmail } from '../../db/email-log';
import { pageTokenAfter, readPageAfter } from '../../db/page-token';

/**
 * An email as the log shows it. The send state (`nextAttemptAt`, `followUp`), the provider's message id and the
 * organization stay internal: §12 names the fields a customer sees.
 */
export function presentEmail(email: StoredEmail) {
  return {
    id: email.id,
    notificationId: email.notificationId,
    userId: email.userId,
    to: email.to,
    subject: email.subject,
    status: email.status,
    ...(email.reason === undefined ? {} : { reason: email.reason }),
    transport: email.transport,
    attempts: email.attempts,
    timestamp: email.timestamp,
  };
}

export interface ListEmailsInput extends EmailListing {
  pageSize: number;
  pageToken?: string;
}

/**
 * One page of the tenant's emails, newest first, filtered by notification, user or both. Throws
 * InvalidArgumentError for a page token of another API key or another query, tampered or expired.
 */
export async function listEmails(apiKeyId: string, input: ListEmailsInput) {
  const { pageSize, pageToken, ...listing } = input;
  const scope = { tenant: apiKeyId, query: { operation: 'workspace/emails/get', ...listing } };
  const page = await queryEmails(apiKeyId, listing, { size: pageSize, after: await readPageAfter(pageToken, scope) });
  return { emails: page.items.map(presentEmail), pageToken: await pageTokenAfter(scope, page.after) };
}
