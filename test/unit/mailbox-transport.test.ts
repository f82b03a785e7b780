/**
 * The local stack's mailbox (shared/adapters/email/mailbox.ts): one .eml file per email id, named to sort by time, holding
 * a message a mail program reads.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import type { OutgoingEmail } from '../../shared/adapters/email/email-message';
import { mailboxTransport } from '../../shared/adapters/email/mailbox';

const EMAIL: OutgoingEmail = {
  id: 'eml_01MAILBOXTEST',
  from: { address: 'notify@acme.example', name: 'Acme' },
  to: { address: 'bob@example.org', name: 'Bob' },
  subject: 'Ann Lee mentioned you in Roadmap',
  html: '<p>Ann Lee mentioned you in Roadmap</p>',
  text: 'Ann Lee mentioned you in Roadmap\n',
};

const NOW = new Date('2026-01-02T03:04:05.123Z');

let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'mailbox-'));
  dir = join(root, 'mailbox');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('mailboxTransport', () => {
  it('writes the email as <time>-<id>.eml in a folder it creates, and reports the file as sent', async () => {
    const outcome = await mailboxTransport(dir, { now: () => NOW }).send(EMAIL);

    const file = join(dir, '20260102T030405123Z-eml_01MAILBOXTEST.eml');
    expect(outcome).toEqual({ status: 'sent', providerMessageId: file });
    expect(await readdir(dir)).toEqual(['20260102T030405123Z-eml_01MAILBOXTEST.eml']);
  });

  it('writes a file that parses back as the email', async () => {
    const outcome = await mailboxTransport(dir, { now: () => NOW }).send(EMAIL);
    const file = outcome.status === 'sent' ? outcome.providerMessageId : undefined;

    const parsed = await simpleParser(await readFile(file ?? ''));

    expect(parsed.subject).toBe(EMAIL.subject);
    expect(parsed.messageId).toBe('<eml_01MAILBOXTEST@acme.example>');
    expect(parsed.text).toBe(EMAIL.text);
    expect(parsed.html).toBe(EMAIL.html);
    // The Date header has whole seconds.
    expect(parsed.date).toEqual(new Date('2026-01-02T03:04:05.000Z'));
  });

  it('keeps one file when the same email is sent twice, later', async () => {
    const first = await mailboxTransport(dir, { now: () => NOW }).send(EMAIL);
    const second = await mailboxTransport(dir, { now: () => new Date(NOW.getTime() + 5000) }).send(EMAIL);

    expect(await readdir(dir)).toEqual(['20260102T030405123Z-eml_01MAILBOXTEST.eml']);
    expect(second).toEqual(first);
  });

  it('keeps one file when the same email is sent twice at once', async () => {
    const times = [new Date(NOW.getTime() + 1), NOW];
    const transport = mailboxTransport(dir, { now: () => times.pop() ?? NOW });

    const outcomes = await Promise.all([transport.send(EMAIL), transport.send(EMAIL)]);

    expect(outcomes.map((outcome) => outcome.status)).toEqual(['sent', 'sent']);
    expect((await readdir(dir)).filter((name) => !name.startsWith('.'))).toHaveLength(1);
  });

  it('writes one file per email id, the id matched whole (eml_1 is not x-eml_1)', async () => {
    const transport = mailboxTransport(dir, { now: () => NOW });

    await transport.send({ ...EMAIL, id: 'x-eml_1' });
    await transport.send({ ...EMAIL, id: 'eml_1' });

    expect((await readdir(dir)).sort()).toEqual(['20260102T030405123Z-eml_1.eml', '20260102T030405123Z-x-eml_1.eml']);
  });

  it('reports failed, writing nothing, for an id a file name cannot hold', async () => {
    const outcome = await mailboxTransport(dir, { now: () => NOW }).send({ ...EMAIL, id: '../escape' });

    expect(outcome.status).toBe('failed');
    expect(await readdir(root)).toEqual([]);
  });

  it('reports retry when the folder cannot be written', async () => {
    const notAFolder = join(root, 'file');
    await writeFile(notAFolder, 'in the way');

    const outcome = await mailboxTransport(join(notAFolder, 'mailbox'), { now: () => NOW }).send(EMAIL);

    expect(outcome).toEqual({
      status: 'retry',
      reason: `The mailbox ${join(notAFolder, 'mailbox')} could not be written (ENOTDIR).`,
    });
  });
});
