/**
 * The content of a notification email (docs/decisions.md §12 "Content"): the subject is the notification's
 * headline template rendered with its data; the body has the headline and `displayBodyMessage`, as HTML and as
 * plain text; From is `"<fromCompany>" <fromEmail>`.
 *
 * Templates: `{{name}}` and dotted `{{actionUser.name}}` placeholders, spaces allowed inside the braces
 * (`{{ actionUser.name }}`); anything else between braces is left as it is written. A placeholder's value:
 * - a string as it is; a finite number, a boolean or a bigint as its text;
 * - an object: its `name` when that is a string (the api-spec's user objects, `{{actionUser}}` → "Ann Lee"), else
 *   nothing; an array: nothing (no list formatting is defined);
 * - missing, null, NaN or ±Infinity: nothing.
 * Only the data's own properties are looked up: `{{constructor}}` or `{{__proto__}}` find nothing.
 *
 * Safety:
 * - Subject (and display names): plain text on one line. Line breaks, tabs and control characters become spaces,
 *   so data cannot start a header of its own (the MIME composer encodes the rest); trimmed; cut to
 *   SUBJECT_MAX_CHARS characters. A subject that renders empty is "New notification".
 * - HTML: the whole rendered text is escaped (`&`, `<`, `>`, `"`, `'`), the template's own text as much as each
 *   value, so markup in either shows as text; `displayBodyMessage`'s line breaks become `<br>`. The layout is a
 *   fixed inline-styled page (mail programs drop `<style>` blocks and ignore external CSS).
 * - Plain text: the same words, unescaped (a text/plain part is never interpreted as markup).
 */
import { oneLine, type Mailbox, type OutgoingEmail } from '../../adapters/email/email-message';

export interface NotificationEmailInput {
  /** Our email id (`eml_…`). */
  id: string;
  /** The notification's `displayHeadlineMessageTemplate`. */
  headlineTemplate: string;
  /** The notification's `displayHeadlineMessageTemplateData`. */
  templateData?: Record<string, unknown>;
  /** The notification's `displayBodyMessage`. */
  bodyMessage?: string;
  /** The email configuration's `fromEmail` (required to send). */
  fromEmail: string;
  /** The email configuration's `fromCompany`: the sender's display name when set. */
  fromCompany?: string;
  to: Mailbox;
}

/** Long enough for any headline a person reads in an inbox; mail programs show about 60–100 characters. */
export const SUBJECT_MAX_CHARS = 200;
export const FALLBACK_SUBJECT = 'New notification';

/** `{{ path }}`: one or more dot-separated keys of anything but braces, dots and whitespace. */
const PLACEHOLDER = /\{\{\s*([^{}.\s]+(?:\.[^{}.\s]+)*)\s*\}\}/g;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` in `data`, own properties only; undefined when any step is missing. */
function lookUp(data: Record<string, unknown>, path: string): unknown {
  let current: unknown = data;
  for (const key of path.split('.')) {
    if (!isRecord(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** How a placeholder's value reads (see the module comment). */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (isRecord(value) && Object.hasOwn(value, 'name') && typeof value.name === 'string') return value.name;
  return '';
}

/** `template` with each placeholder replaced by its value in `data` (see the module comment). Plain text, unescaped. */
export function renderTemplate(template: string, data: Record<string, unknown> = {}): string {
  return template.replace(PLACEHOLDER, (_placeholder, path: string) => asText(lookUp(data, path)));
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]);
}

/** `text` cut to `max` characters (never inside a surrogate pair), with an ellipsis when cut. */
function cut(text: string, max: number): string {
  const characters = [...text];
  return characters.length <= max
    ? text
    : `${characters
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/** Line breaks as `\n`, other control characters (but tabs) dropped: the body's text as both parts show it. */
function normalizedBody(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
    .trim();
}

const FONT = "-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";

function htmlPage(title: string, headline: string, body: string): string {
  const bodyBlock =
    body === ''
      ? ''
      : `\n<p style="margin:16px 0 0;font-size:15px;line-height:22px;color:#3d444d;">${escapeHtml(body).replace(/\n/g, '<br>\n')}</p>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
</head>
<body style="margin:0;padding:0;background-color:#f4f5f7;">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0" border="0" style="background-color:#f4f5f7;">
<tr><td align="center" style="padding:24px 12px;">
<table role="presentation" width="100%" cellspacing="0" cellpadding="0" border="0" style="max-width:560px;background-color:#ffffff;border:1px solid #e1e4e8;border-radius:8px;">
<tr><td style="padding:24px 28px;font-family:${FONT};color:#1f2328;">
<p style="margin:0;font-size:18px;line-height:26px;font-weight:600;">${escapeHtml(headline)}</p>${bodyBlock}
</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`;
}

/** The subject of a notification's emails: its headline on one line, cut to SUBJECT_MAX_CHARS, or the fallback. */
export function renderSubject(headlineTemplate: string, templateData?: Record<string, unknown>): string {
  const headline = oneLine(renderTemplate(headlineTemplate, templateData));
  return headline === '' ? FALLBACK_SUBJECT : cut(headline, SUBJECT_MAX_CHARS);
}

/** The notification email for one recipient (see the module comment). */
export function renderNotificationEmail(input: NotificationEmailInput): OutgoingEmail {
  const headline = oneLine(renderTemplate(input.headlineTemplate, input.templateData));
  const subject = renderSubject(input.headlineTemplate, input.templateData);
  const body = normalizedBody(input.bodyMessage ?? '');
  const company = oneLine(input.fromCompany ?? '');
  const shownHeadline = headline === '' ? subject : headline;
  return {
    id: input.id,
    from: company === '' ? { address: input.fromEmail } : { address: input.fromEmail, name: company },
    to: input.to,
    subject,
    html: htmlPage(subject, shownHeadline, body),
    text: `${shownHeadline}${body === '' ? '' : `\n\n${body}`}\n`,
  };
}
