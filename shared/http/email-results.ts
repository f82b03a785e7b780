/** Result schema of the email log operation (docs/decisions.md §12). */
import * as z from 'zod/mini';
import { EMAIL_TRANSPORT_NAMES } from '../adapters/email/email-transport';
import { EMAIL_STATUSES } from '../db/email-log';

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
    transport: z.enum(EMAIL_TRANSPORT_NAMES),
    /** Send attempts made so far. */
    attempts: z.int(),
    timestamp: z.int(),
  });
