/**
 * The SendGrid transport (docs/decisions.md §12, email configurations of type `sendgrid` and `custom`): one v3 Mail
 * Send request per email, `POST {SENDGRID_BASE_URL}/v3/mail/send` with the tenant's API key as a Bearer token.
 *
 * - A plain call through postJson (shared/adapters/http/outbound-http.ts), not `@sendgrid/mail`: Mail Send is one JSON POST,
 *   and postJson gives it the rules every outbound call here keeps (one deadline for the whole exchange, no
 *   redirects, at most 1 KB of the answer read, never a throw); `@sendgrid/mail` would bring axios with timeouts,
 *   redirects and retries of its own, and errors whose attached request config carries the key.
 * - The body: one personalization to the recipient, `from`, `subject`, `content` with text/plain first and then
 *   text/html (the order Mail Send requires), `custom_args.email_id` with our email id (SendGrid's event webhook
 *   sends it back), and our Message-ID in `headers` (Mail Send reserves To, From, Subject, Reply-To, CC, BCC,
 *   Content-Type, Content-Transfer-Encoding, DKIM-Signature, Received and X-SG-*, not Message-ID), so a retried
 *   email keeps its Message-ID.
 * - The outcome: a 2xx is `sent`, with SendGrid's `X-Message-Id` (a 2xx is SendGrid's acceptance: a connection lost
 *   after it does not make the email go again); a 429, a 5xx or no answer (timeout, no connection) is `retry`; any
 *   other status is `failed`, with the `errors[].message` texts of SendGrid's answer.
 * - The key never reaches a reason: each occurrence of it in SendGrid's answer (a proxy or a fake may echo it),
 *   a part of it cut off at the 1 KB limit, and anything shaped like a SendGrid key are replaced by `[redacted]`;
 *   request headers are never quoted.
 * - SENDGRID_BASE_URL is operator configuration, never customer input, so it is called with private addresses
 *   allowed (tests run a fake on 127.0.0.1).
 */
import { config } from '../../core/config';
import { messageIdFor, oneLine, type Mailbox, type OutgoingEmail } from './email-message';
import { failed, retry, type EmailTransport, type SendOutcome } from './email-transport';
import { postJson, type OutboundResult } from '../http/outbound-http';

export interface SendgridOptions {
  /** Default: SENDGRID_BASE_URL (https://api.sendgrid.com). */
  baseUrl?: string;
  /** Deadline of one send; default EMAIL_TIMEOUT_MS. */
  timeoutMs?: number;
}

export const SENDGRID_MAIL_SEND_PATH = '/v3/mail/send';

const MESSAGE_ID_HEADER = 'x-message-id';
const REDACTED = '[redacted]';
/** SendGrid's key format, `SG.<key id>.<secret>`: redacted wherever it appears, whoever's key it is. */
const SENDGRID_KEY_SHAPE = /SG\.[\w-]{8,}\.[\w-]{8,}/g;
/** The shortest cut-off tail of the key that is still redacted (a shorter one cannot identify it). */
const KEY_TAIL_MIN_CHARS = 6;
/** What an HTTP header value may carry of a key: visible ASCII, no spaces. */
const HEADER_TOKEN = /^[\x21-\x7e]+$/;
/** How much of an answer that is not SendGrid's error JSON is quoted. */
const RAW_ANSWER_MAX_CHARS = 200;

interface MailSendAddress {
  email: string;
  name?: string;
}

function address({ address: email, name }: Mailbox): MailSendAddress {
  const displayName = oneLine(name ?? '');
  return displayName === '' ? { email } : { email, name: displayName };
}

/** The Mail Send body of `email`. Throws a TypeError when the email's id or From address cannot make a Message-ID. */
function mailSendBody(email: OutgoingEmail): string {
  return JSON.stringify({
    personalizations: [{ to: [address(email.to)] }],
    from: address(email.from),
    subject: oneLine(email.subject),
    content: [
      { type: 'text/plain', value: email.text },
      { type: 'text/html', value: email.html },
    ],
    custom_args: { email_id: email.id },
    headers: { 'Message-ID': messageIdFor(email) },
  });
}

/** `text` with every trace of `secret` (see the module comment) replaced by `[redacted]`. */
export function redactSecret(text: string, secret: string): string {
  let redacted = secret === '' ? text : text.split(secret).join(REDACTED);
  redacted = redacted.replace(SENDGRID_KEY_SHAPE, REDACTED);
  for (let length = Math.min(secret.length - 1, redacted.length); length >= KEY_TAIL_MIN_CHARS; length -= 1) {
    if (redacted.endsWith(secret.slice(0, length))) return `${redacted.slice(0, -length)}${REDACTED}`;
  }
  return redacted;
}

/**
 * The `errors[].message` texts of SendGrid's error answer, or the start of the answer when it is not that JSON;
 * redacted before it is cut, so that a cut cannot leave part of the key behind.
 */
function providerReason(responseBody: string, secret: string): string {
  try {
    const parsed: unknown = JSON.parse(responseBody);
    const errors = typeof parsed === 'object' && parsed !== null && 'errors' in parsed ? parsed.errors : undefined;
    const messages = Array.isArray(errors)
      ? errors.flatMap((entry: unknown) =>
          typeof entry === 'object' && entry !== null && 'message' in entry && typeof entry.message === 'string'
            ? [oneLine(entry.message)]
            : [],
        )
      : [];
    if (messages.length > 0) return redactSecret(messages.join('; '), secret);
  } catch {
    // Not JSON (a proxy's page, or an answer cut at 1 KB): quoted as text below.
  }
  const text = redactSecret(oneLine(responseBody), secret);
  return text.length > RAW_ANSWER_MAX_CHARS ? `${text.slice(0, RAW_ANSWER_MAX_CHARS)}…` : text;
}

function outcomeOf(result: OutboundResult, secret: string): SendOutcome {
  const { statusCode } = result;
  if (statusCode >= 200 && statusCode < 300) {
    const providerMessageId = result.headers?.[MESSAGE_ID_HEADER];
    return providerMessageId === undefined ? { status: 'sent' } : { status: 'sent', providerMessageId };
  }
  if (statusCode === 0)
    return retry(redactSecret(`SendGrid did not answer: ${result.error ?? 'no response.'}`, secret));
  const detail = providerReason(result.responseBody, secret);
  const reason = `SendGrid answered ${statusCode}${detail === '' ? '.' : `: ${detail}`}`;
  return statusCode === 429 || statusCode >= 500 ? retry(reason) : failed(reason);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The transport that sends through SendGrid with `apiKey` (the tenant's, decrypted). */
export function sendgridTransport(apiKey: string, options: SendgridOptions = {}): EmailTransport {
  const url = `${(options.baseUrl ?? config.sendgridBaseUrl).replace(/\/+$/, '')}${SENDGRID_MAIL_SEND_PATH}`;
  const timeoutMs = options.timeoutMs ?? config.emailTimeoutMs;
  return {
    name: 'sendgrid',
    async send(email: OutgoingEmail): Promise<SendOutcome> {
      // A key an HTTP header cannot carry would fail the same way every time (and node's error would not say why).
      if (!HEADER_TOKEN.test(apiKey))
        return failed('The SendGrid API key is empty or has characters an HTTP header cannot carry.');
      let body: string;
      try {
        body = mailSendBody(email);
      } catch (error) {
        return failed(`The email could not be prepared: ${errorMessage(error)}`);
      }
      const headers = {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
      };
      const result = await postJson(url, headers, body, {
        timeoutMs,
        allowPrivate: true,
        responseHeaders: [MESSAGE_ID_HEADER],
      });
      return outcomeOf(result, apiKey);
    },
  };
}
