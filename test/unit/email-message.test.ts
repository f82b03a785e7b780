/**
 * The RFC 5322 form of a notification email (shared/adapters/email/email-message.ts), read back with mailparser as a mail
 * program would: addresses and names, an encoded non-ASCII subject, both alternatives, a Message-ID that is the
 * same for every send of one email, and no header a subject or a name can add.
 */
import { simpleParser, type AddressObject } from 'mailparser';
import {
  asciiAddress,
  composeMessage,
  messageIdFor,
  type OutgoingEmail,
} from '../../shared/adapters/email/email-message';

const EMAIL: OutgoingEmail = {
  id: 'eml_01COMPOSETEST',
  from: { address: 'notify@acme.example', name: 'Acme Café' },
  to: { address: 'bob@example.org', name: 'Bøb Ståhl' },
  subject: 'Ann Lee a commenté « Feuille de route » 🚀',
  html: '<p>Ann Lee a commenté « Feuille de route »</p>',
  text: 'Ann Lee a commenté « Feuille de route »\n',
};

const NOW = new Date('2026-01-02T03:04:05.000Z');

function single(address: AddressObject | AddressObject[] | undefined): AddressObject['value'] {
  if (address === undefined || Array.isArray(address)) throw new Error('expected one address header');
  return address.value;
}

/** The message's header block, as sent: every line up to the first empty one. */
function headerBlock(message: Buffer): string {
  const text = message.toString('latin1');
  return text.slice(0, text.indexOf('\r\n\r\n'));
}

describe('composeMessage', () => {
  it('builds a message whose From (with the company name), To, non-ASCII Subject and Date read back as given', async () => {
    const parsed = await simpleParser(await composeMessage(EMAIL, NOW));

    expect(single(parsed.from)).toEqual([{ address: 'notify@acme.example', name: 'Acme Café' }]);
    expect(single(parsed.to)).toEqual([{ address: 'bob@example.org', name: 'Bøb Ståhl' }]);
    expect(parsed.subject).toBe(EMAIL.subject);
    expect(parsed.date).toEqual(NOW);
  });

  it('carries the text and the html as the two parts of a multipart/alternative, text first', async () => {
    const message = await composeMessage(EMAIL, NOW);
    const parsed = await simpleParser(message);

    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/alternative' });
    expect(parsed.text).toBe(EMAIL.text);
    expect(parsed.html).toBe(EMAIL.html);
    const text = message.toString('latin1');
    expect(text.indexOf('Content-Type: text/plain')).toBeLessThan(text.indexOf('Content-Type: text/html'));
  });

  it('derives the Message-ID from the email id and the From domain, the same for every send of the email', async () => {
    const first = await simpleParser(await composeMessage(EMAIL, NOW));
    const again = await simpleParser(await composeMessage(EMAIL, new Date(NOW.getTime() + 60_000)));

    expect(first.messageId).toBe('<eml_01COMPOSETEST@acme.example>');
    expect(again.messageId).toBe(first.messageId);
  });

  it('ends every line with CRLF and keeps the headers ASCII (encoded words for the rest)', async () => {
    const message = await composeMessage(EMAIL, NOW);
    const text = message.toString('latin1');

    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(headerBlock(message)).toMatch(/^[\x20-\x7e\r\n\t]*$/);
  });

  it('keeps every line within 998 characters (RFC 5322; SES refuses longer) when the content has a very long line', async () => {
    const long = `${'word '.repeat(2000)}end`;

    const message = await composeMessage({ ...EMAIL, text: long, html: `<p>${long}</p>` }, NOW);
    const parsed = await simpleParser(message);

    const longest = Math.max(
      ...message
        .toString('latin1')
        .split('\r\n')
        .map((line) => line.length),
    );
    expect(longest).toBeLessThanOrEqual(998);
    expect(parsed.text).toBe(long);
  });

  it('lets no line break in a subject or a name start a header of its own', async () => {
    const hostile: OutgoingEmail = {
      ...EMAIL,
      from: { address: 'notify@acme.example', name: 'Acme\r\nBcc: victim@example.com' },
      to: { address: 'bob@example.org', name: 'Bob\nX-Injected: name' },
      subject: 'Hello\r\nBcc: attacker@example.com\r\n\r\n<body>',
    };

    const message = await composeMessage(hostile, NOW);
    const parsed = await simpleParser(message);

    const names = headerBlock(message)
      .split('\r\n')
      .filter((line) => !/^[ \t]/.test(line))
      .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
    expect(names.sort()).toEqual(['content-type', 'date', 'from', 'message-id', 'mime-version', 'subject', 'to']);
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.subject).toBe('Hello Bcc: attacker@example.com <body>');
    expect(single(parsed.from)).toEqual([{ address: 'notify@acme.example', name: 'Acme Bcc: victim@example.com' }]);
    expect(parsed.text).toBe(EMAIL.text);
  });

  it('leaves the display name out when there is none', async () => {
    const parsed = await simpleParser(
      await composeMessage({ ...EMAIL, from: { address: 'notify@acme.example' } }, NOW),
    );

    expect(single(parsed.from)).toEqual([{ address: 'notify@acme.example', name: '' }]);
  });
});

describe('messageIdFor', () => {
  it('punycodes an internationalized From domain and lower-cases it', () => {
    expect(messageIdFor({ id: 'eml_1', from: { address: 'Notify@Bücher.Example' } })).toBe(
      '<eml_1@xn--bcher-kva.example>',
    );
  });

  it.each(['', 'eml 1', 'eml_1>x', 'eml/1', 'eml.1'])('refuses the id %j', (id) => {
    expect(() => messageIdFor({ id, from: { address: 'notify@acme.example' } })).toThrow(TypeError);
  });

  it('refuses a From that is not an address', () => {
    expect(() => messageIdFor({ id: 'eml_1', from: { address: 'acme.example' } })).toThrow(TypeError);
  });
});

describe('asciiAddress', () => {
  it('punycodes the domain and keeps the local part', () => {
    expect(asciiAddress('jörg@bücher.example')).toBe('jörg@xn--bcher-kva.example');
    expect(asciiAddress('bob@example.org')).toBe('bob@example.org');
  });
});
