/**
 * What every email transport is (SendGrid, SES, the local mailbox) and what one send comes to (docs/decisions.md
 * §12): `sent`; `retry`, a problem that may pass (a 429, a 5xx, a timeout, no connection), which the pipeline
 * retries on the webhook schedule; or `failed`, final (any other refusal). A transport never throws for what the
 * provider or the network does, and a `reason` never carries a credential or a request header.
 */
import type { OutgoingEmail } from './email-message';

/** `providerMessageId`: the provider's id of the message (SendGrid's X-Message-Id, SES's MessageId, the mailbox's file). */
export type SendOutcome =
  | { status: 'sent'; providerMessageId?: string }
  | { status: 'retry'; reason: string }
  | { status: 'failed'; reason: string };

/**
 * The transports by name: the one list that the email log's items, its API schema (shared/http/email-results.ts) and
 * the choice of a transport (shared/domain/email/send.ts) all take. A new transport adds its name here.
 */
export const EMAIL_TRANSPORT_NAMES = ['sendgrid', 'ses', 'mailbox'] as const;

export type EmailTransportName = (typeof EMAIL_TRANSPORT_NAMES)[number];

export interface EmailTransport {
  /** Which transport this is, as the email log records it. */
  readonly name: EmailTransportName;
  /** Sends `email` once. Resolves with the outcome; never rejects for provider or network problems. */
  send(email: OutgoingEmail): Promise<SendOutcome>;
}

/** The longest reason kept: the email log shows it, and a provider's answer can be long. */
export const REASON_MAX_CHARS = 500;

/** `text` cut to REASON_MAX_CHARS (never inside a surrogate pair), with an ellipsis when cut. */
export function boundedReason(text: string): string {
  const characters = [...text.trim()];
  return characters.length <= REASON_MAX_CHARS
    ? characters.join('')
    : `${characters.slice(0, REASON_MAX_CHARS - 1).join('')}…`;
}

export const retry = (reason: string): SendOutcome => ({ status: 'retry', reason: boundedReason(reason) });
export const failed = (reason: string): SendOutcome => ({ status: 'failed', reason: boundedReason(reason) });
