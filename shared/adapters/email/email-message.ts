/**
 * A notification email as the transports take it (docs/decisions.md §12), and its RFC 5322 form.
 *
 * - The message is built by nodemailer's MailComposer: it encodes and folds every header (RFC 2047 encoded words for
 *   non-ASCII subjects and names, quoted display names, punycoded domains) and builds the multipart/alternative body
 *   (text first, then html, as RFC 2046 orders alternatives: the last is the preferred one). No header text is
 *   concatenated here: CR or LF in a subject or a name cannot start a header of its own.
 * - The Message-ID is derived from the email's id and the From address's domain, `<eml_…@example.com>`, so an
 *   email sent again (a retry) carries the same Message-ID and a mail program shows it once. (SES replaces the
 *   Message-ID and Date of what it sends with its own; SendGrid and the local mailbox keep ours.)
 * - The composer never reads a file or a URL: the content is our strings only.
 */
import { domainToASCII } from 'node:url';
import MailComposer from 'nodemailer/lib/mail-composer';

export interface Mailbox {
  address: string;
  /** The display name; none when absent or blank. */
  name?: string;
}

export interface OutgoingEmail {
  /** Our email's id (`eml_…`): names the email in every transport, and makes its Message-ID. */
  id: string;
  from: Mailbox;
  to: Mailbox;
  /** Plain text, one line (renderers collapse line breaks). */
  subject: string;
  html: string;
  text: string;
}

/** An email id usable inside a Message-ID and a file name: RFC 5322 `atext` without the characters a file system or a shell minds. */
const EMAIL_ID = /^[A-Za-z0-9_-]{1,200}$/;

/**
 * `address` with its domain in ASCII (punycode), as SES and a Message-ID need it; the local part is kept as it is.
 * Throws a TypeError when the address has no `@` or its domain is not a valid host name.
 */
export function asciiAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) throw new TypeError(`Not an email address: "${address}".`);
  const domain = domainToASCII(address.slice(at + 1));
  if (domain === '') throw new TypeError(`The domain of "${address}" is not a valid host name.`);
  return `${address.slice(0, at)}@${domain}`;
}

/**
 * The Message-ID of `email`: `<id@domain of the From address>`, the same for every send of one email. Throws a
 * TypeError when the id has characters a Message-ID or a file name cannot hold, or the From address is not one.
 */
export function messageIdFor(email: Pick<OutgoingEmail, 'id' | 'from'>): string {
  if (!EMAIL_ID.test(email.id))
    throw new TypeError(`An email id must be 1–200 letters, digits, "_" or "-", got "${email.id}".`);
  const domain = asciiAddress(email.from.address).split('@').pop() ?? '';
  return `<${email.id}@${domain.toLowerCase()}>`;
}

/** Line breaks, tabs and other control characters, which have no place in a one-line header value. */
const CONTROL_OR_SPACE_RUN = /[\s\u0000-\u001f\u007f-\u009f]+/g;

/** `text` on one line: each run of whitespace or control characters becomes one space; trimmed. */
export function oneLine(text: string): string {
  return text.replace(CONTROL_OR_SPACE_RUN, ' ').trim();
}

function mailbox({ address, name }: Mailbox): { address: string; name?: string } {
  const displayName = oneLine(name ?? '');
  return displayName === '' ? { address } : { address, name: displayName };
}

/**
 * The RFC 5322 message of `email` (CRLF line ends), dated `now`. Throws a TypeError for an id or From address
 * messageIdFor refuses, and what MailComposer throws for content it cannot encode.
 */
export async function composeMessage(email: OutgoingEmail, now: Date = new Date()): Promise<Buffer> {
  const composer = new MailComposer({
    from: mailbox(email.from),
    to: mailbox(email.to),
    subject: oneLine(email.subject),
    text: email.text,
    html: email.html,
    messageId: messageIdFor(email),
    date: now,
    newline: 'win',
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile().build();
}
