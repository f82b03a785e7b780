/**
 * The local stack's mailbox (docs/decisions.md §12, type `default` outside AWS): each email becomes one file
 * `<dir>/<UTC time, 20260102T030405123Z>-<email id>.eml` holding its RFC 5322 message, which any mail program
 * opens. Names sort by the time of writing.
 *
 * - Written atomically (shared/adapters/files/atomic-file.ts): a reader or a restarted stack never finds half a message.
 * - One file per email id: a send finds an earlier file of the same id and leaves it as it is. Two sends of one id
 *   at the same moment may both write; each then lists the id's files and deletes all but the first by name, so
 *   one file stays (the first by name is never deleted, and the last to list sees every file).
 * - The outcome is `sent` with the file's path as providerMessageId (the caller logs it); a file system error is
 *   `retry` (a full disk may pass); an email that cannot be composed (an id unfit for a file name) is `failed`.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '../files/atomic-file';
import { composeMessage, type OutgoingEmail } from './email-message';
import { failed, retry, type EmailTransport, type SendOutcome } from './email-transport';

export interface MailboxOptions {
  /** The clock that dates each message and names its file; default the system clock. */
  now?: () => Date;
}

/** `<time>-<id>.eml`; the id is what messageIdFor accepts, so it holds no dot, slash or space. */
const EML_NAME = /^(\d{8}T\d{9}Z)-([A-Za-z0-9_-]+)\.eml$/;

/** 2026-01-02T03:04:05.123Z → 20260102T030405123Z: sorts as the time does and is a valid name everywhere. */
function sortableTime(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, '');
}

/** The names of the `.eml` files of `id` in `dir`, sorted (the first is the oldest). */
async function filesOf(dir: string, id: string): Promise<string[]> {
  const names = await readdir(dir);
  return names.filter((name) => EML_NAME.exec(name)?.[2] === id).sort();
}

function describe(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message : String(error);
}

/** The transport that writes each email into the folder `dir` (created when missing). */
export function mailboxTransport(dir: string, options: MailboxOptions = {}): EmailTransport {
  const clock = options.now ?? (() => new Date());

  async function write(email: OutgoingEmail, message: Buffer, now: Date): Promise<string> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const earlier = await filesOf(dir, email.id);
    if (earlier.length > 0) return join(dir, earlier[0]);
    await writeFileAtomically(join(dir, `${sortableTime(now)}-${email.id}.eml`), message);
    const [kept, ...extra] = await filesOf(dir, email.id);
    await Promise.all(extra.map((name) => rm(join(dir, name), { force: true })));
    return join(dir, kept);
  }

  return {
    name: 'mailbox',
    async send(email: OutgoingEmail): Promise<SendOutcome> {
      const now = clock();
      let message: Buffer;
      try {
        message = await composeMessage(email, now);
      } catch (error) {
        return failed(`The email could not be composed: ${error instanceof Error ? error.message : String(error)}`);
      }
      try {
        return { status: 'sent', providerMessageId: await write(email, message, now) };
      } catch (error) {
        return retry(`The mailbox ${dir} could not be written (${describe(error)}).`);
      }
    },
  };
}
