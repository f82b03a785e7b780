/**
 * One attempt of an email (docs/decisions.md §12), run by the delivery worker from an `email` job: the email, if it
 * still stands where the job expects, is rendered from its notification as it is now and sent through the key's
 * transport; the outcome is recorded on the email item (conditional on the attempt count, so a job handed out
 * twice records once). A 429, a 5xx or a timeout is retried on the webhook schedule; any other refusal is final,
 * with the provider's reason (never the key). What must follow a retried attempt (its next job) is owed on the email
 * (`followUp`) until queued, as for webhook deliveries. Before sending, the worker claims the attempt (a lease of the
 * send's deadline and a margin), so two copies of one job never both send; only a worker that dies between the
 * provider's answer and recording it leaves an email that is sent again once the claim lapses.
 */
import { config } from '../../core/config';
import type { EmailTransport, SendOutcome } from '../../adapters/email/email-transport';
import { logger } from '../../core/logger';
import { mailboxTransport } from '../../adapters/email/mailbox';
import type { JobQueue } from '../../adapters/queue/queue';
import { sendgridTransport } from '../../adapters/email/sendgrid';
import { sesTransport } from '../../adapters/email/ses-transport';
import type { DecryptSecret } from '../../crypto/encryption';
import { getTogether } from '../../db/batch';
import { emailConfigKey, toEmailConfig, type EmailConfigRecord } from '../../db/email-config';
import {
  claimEmailAttempt,
  clearEmailFollowUp,
  getEmail,
  recordEmailOutcome,
  type EmailOutcome,
  type StoredEmail,
} from '../../db/email-log';
import { notificationKey, toNotification } from '../../db/notification';
import { providerKeyContext } from '../email-config';
import { enqueue, isDue, type DeliveryJob, type JobDeps } from '../delivery/jobs';
import { retryDelayMs } from '../delivery/schedule';
import { renderNotificationEmail } from './render';
import { transportOf } from './plan';

export type EmailJob = Extract<DeliveryJob, { kind: 'email' }>;

/** How long past the send's deadline a claim holds: the outcome's write must fit in it. */
const CLAIM_MARGIN_MS = 20_000;

// The service's own transports, built once per process.
let mailbox: EmailTransport | undefined;
let ses: EmailTransport | undefined;

/** Whether `address` may send from an SES identity: the address itself, or any address at the identity's domain. */
function atIdentity(address: string, identity: string): boolean {
  const from = address.trim().toLowerCase();
  const verified = identity.trim().toLowerCase();
  return verified.includes('@') ? from === verified : from.endsWith(`@${verified}`);
}

/** The transport `email` goes through, or why it cannot go anywhere. */
async function transportFor(
  apiKeyId: string,
  emailConfig: EmailConfigRecord,
  decrypt: DecryptSecret,
): Promise<EmailTransport | { unavailable: string }> {
  switch (transportOf(emailConfig)) {
    case 'sendgrid': {
      const sealed = emailConfig.providerKey;
      if (sealed === undefined) return { unavailable: 'The email configuration has no provider apiKey.' };
      return sendgridTransport(await decrypt(sealed.ciphertext, providerKeyContext(apiKeyId)));
    }
    case 'mailbox':
      mailbox ??= mailboxTransport(String(config.emailMailboxDir));
      return mailbox;
    case 'ses': {
      const identity = config.sesIdentity;
      if (identity === undefined)
        return {
          unavailable:
            'Amazon SES is not set up in this deployment: the operator deploys with -c sesIdentity=<verified identity>.',
        };
      if (!atIdentity(String(emailConfig.emailServiceConfig.fromEmail), identity)) {
        return { unavailable: `fromEmail is not at the verified SES identity ${identity}: use an address at it.` };
      }
      ses ??= sesTransport();
      return ses;
    }
  }
}

/** The email after an attempt with `outcome`: sent, failed for good, or pending its next attempt on the schedule. */
function nextState(email: StoredEmail, outcome: SendOutcome, now: number): EmailOutcome {
  if (outcome.status === 'sent') {
    return {
      status: 'sent',
      followUp: false,
      ...(outcome.providerMessageId === undefined ? {} : { providerMessageId: outcome.providerMessageId }),
    };
  }
  if (outcome.status === 'failed') return { status: 'failed', reason: outcome.reason, followUp: false };
  const wait = retryDelayMs(email.attempts + 1);
  return wait === undefined
    ? {
        status: 'failed',
        reason: `Gave up after ${email.attempts + 1} attempts. Last: ${outcome.reason}`,
        followUp: false,
      }
    : { status: 'pending', reason: outcome.reason, nextAttemptAt: now + wait, followUp: true };
}

/** The failed outcome of an attempt that cannot be made. */
const cannot = (reason: string): SendOutcome => ({ status: 'failed', reason });

/**
 * One attempt of `email`: rendered from its notification as it is now and sent through the key's transport once
 * this worker holds the attempt. Undefined when another worker holds it (a job handed out twice).
 */
async function attempt(
  apiKeyId: string,
  email: StoredEmail,
  decrypt: DecryptSecret,
  clock: () => number,
): Promise<SendOutcome | undefined> {
  // The key's configuration and the notification, read with those of the other emails of the worker's batch.
  const configKey = emailConfigKey(apiKeyId);
  const items = await getTogether([configKey, notificationKey(apiKeyId, email.organizationId, email.notificationId)]);
  const configItem = items.find((item) => item.sk === configKey.sk);
  const notificationItem = items.find((item) => item !== configItem);
  const emailConfig = toEmailConfig(configItem)?.config;
  if (emailConfig === undefined || emailConfig.useEmailService !== true)
    return cannot('The email service was turned off before the email was sent.');
  if (notificationItem === undefined) return cannot('The notification was deleted before the email was sent.');
  const settings = emailConfig.emailServiceConfig;
  if (settings.fromEmail === undefined || settings.fromEmail === '')
    return cannot('The email configuration has no fromEmail.');
  const transport = await transportFor(apiKeyId, emailConfig, decrypt);
  if ('unavailable' in transport) return cannot(transport.unavailable);

  const notification = toNotification(notificationItem);
  const outgoing = renderNotificationEmail({
    id: email.id,
    headlineTemplate: notification.displayHeadlineMessageTemplate,
    ...(notification.displayHeadlineMessageTemplateData === undefined
      ? {}
      : { templateData: notification.displayHeadlineMessageTemplateData }),
    ...(notification.displayBodyMessage === undefined ? {} : { bodyMessage: notification.displayBodyMessage }),
    fromEmail: settings.fromEmail,
    ...(settings.fromCompany === undefined ? {} : { fromCompany: settings.fromCompany }),
    to: { address: email.to },
  });
  const claimed = clock();
  if (!(await claimEmailAttempt(apiKeyId, email, claimed, claimed + config.emailTimeoutMs + CLAIM_MARGIN_MS)))
    return undefined;
  const outcome = await transport.send(outgoing);
  if (outcome.status === 'sent') {
    logger.info('Email sent', {
      emailId: email.id,
      transport: transport.name,
      ...(outcome.providerMessageId === undefined ? {} : { providerMessageId: outcome.providerMessageId }),
    });
  }
  return outcome;
}

export async function runEmailJob(job: EmailJob, deps: JobDeps): Promise<void> {
  const clock = deps.now ?? Date.now;
  if (!isDue(job, clock())) {
    await enqueue(deps.queue, [job], clock());
    return;
  }
  const email = await getEmail(job.apiKeyId, job.emailId);
  if (email === undefined) return;
  // This job's attempt was recorded, but the worker stopped before queueing the next one: queue it now.
  if (email.attempts === job.attempt && email.followUp === true) {
    await followUp(job, email, deps.queue, clock());
    return;
  }
  if (email.status !== 'pending' || email.attempts !== job.attempt - 1) return;

  const outcome = await attempt(job.apiKeyId, email, deps.decrypt, clock);
  if (outcome === undefined) return;
  const now = clock();
  const next = nextState(email, outcome, now);
  if (!(await recordEmailOutcome(job.apiKeyId, email, next))) return;
  if (next.followUp) await followUp(job, { ...email, ...next, attempts: email.attempts + 1 }, deps.queue, now);
}

/** Queues the next attempt of a retried email, then clears its `followUp`. */
async function followUp(job: EmailJob, email: StoredEmail, queue: JobQueue, now: number): Promise<void> {
  if (email.status === 'pending')
    await enqueue(queue, [{ ...job, attempt: email.attempts + 1, dueAt: email.nextAttemptAt ?? now }], now);
  await clearEmailFollowUp(job.apiKeyId, email.id, email.attempts);
}
