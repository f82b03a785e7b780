/** Result schema of the email log operation (docs/decisions.md §12). */
import * as z from 'zod/mini';
import { EMAIL_STATUSES, type EmailTransportName } from '../db/email-log';

// Each a transport of the log; the handler's return type checks that the log has no other.
const EMAIL_TRANSPORTS = ['sendgrid', 'ses', 'mailbox'] as const satisfies readonly EmailTransportName[];

/** An email of the log (emails/get); `timestamp` is its creation, in ms. */
export const emailLogEntry = () =>
  z.object({
    id: z.string(),
    notificationId: z.string(),
    userId: z.string(),
    /** The recipient's address; empty when none was known (the email is then `skipped`). */
    to: z.string(),
    subject: z.string(),
    status: z.enum(EMAIL_STATUSES),
    /** Why the email was skipped or failed, or why its last attempt is retried. */
    reason: z.optional(z.string()),
    /** Who sends it: `ses` (AWS), `mailbox` (the local stack's .eml files) or `sendgrid`. */
    transport: z.enum(EMAIL_TRANSPORTS),
    /** Send attempts made so far. */
    attempts: z.int(),
    timestamp: z.int(),
  });
