/**
 * The SendGrid transport (shared/adapters/email/sendgrid.ts) against a fake Mail Send API on 127.0.0.1: what it sends, and
 * how each answer is classified (sent, retry, failed), with the key kept out of every reason.
 */
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { OutgoingEmail } from '../../shared/adapters/email/email-message';
import { redactSecret, sendgridTransport } from '../../shared/adapters/email/sendgrid';
import { startFakeSendgrid, type FakeSendgrid } from '../support/fake-sendgrid';

const API_KEY = 'SG.fakeKeyId_0123456789.fakeSecret-abcdefghijklmnopqrstuvwxyz';

const EMAIL: OutgoingEmail = {
  id: 'eml_01SENDGRIDTEST',
  from: { address: 'notify@acme.example', name: 'Acme' },
  to: { address: 'bob@example.org', name: 'Bob' },
  subject: 'Ann Lee mentioned you in Roadmap',
  html: '<p>Ann Lee mentioned you in Roadmap</p>',
  text: 'Ann Lee mentioned you in Roadmap\n',
};

let fake: FakeSendgrid;

beforeEach(async () => {
  fake = await startFakeSendgrid();
});

afterEach(async () => {
  await fake.close();
});

const transport = (timeoutMs = 2000) => sendgridTransport(API_KEY, { baseUrl: fake.url, timeoutMs });

describe('sendgridTransport', () => {
  it('sends one Mail Send request with the key as Bearer, the addresses, subject and both contents, and reports sent with the X-Message-Id', async () => {
    fake.answer([{ status: 202, messageId: 'sg-message-1' }]);

    const outcome = await transport().send(EMAIL);

    expect(outcome).toEqual({ status: 'sent', providerMessageId: 'sg-message-1' });
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v3/mail/send');
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body).toEqual({
      personalizations: [{ to: [{ email: 'bob@example.org', name: 'Bob' }] }],
      from: { email: 'notify@acme.example', name: 'Acme' },
      subject: EMAIL.subject,
      content: [
        { type: 'text/plain', value: EMAIL.text },
        { type: 'text/html', value: EMAIL.html },
      ],
      custom_args: { email_id: EMAIL.id },
      headers: { 'Message-ID': '<eml_01SENDGRIDTEST@acme.example>' },
    });
  });

  it('leaves out the names of addresses that have none', async () => {
    await transport().send({
      ...EMAIL,
      from: { address: 'notify@acme.example' },
      to: { address: 'bob@example.org', name: '  ' },
    });

    expect(fake.requests[0].body?.from).toEqual({ email: 'notify@acme.example' });
    expect(fake.requests[0].body?.personalizations[0].to).toEqual([{ email: 'bob@example.org' }]);
  });

  it('sends the same Message-ID when the same email is sent again', async () => {
    await transport().send(EMAIL);
    await transport().send(EMAIL);

    expect(fake.requests.map((request) => request.body?.headers)).toEqual([
      { 'Message-ID': '<eml_01SENDGRIDTEST@acme.example>' },
      { 'Message-ID': '<eml_01SENDGRIDTEST@acme.example>' },
    ]);
  });

  it('reports retry for a 429 and sent for the 202 that follows', async () => {
    fake.answer([429, 202]);

    const first = await transport().send(EMAIL);
    const second = await transport().send(EMAIL);

    expect(first).toEqual({ status: 'retry', reason: 'SendGrid answered 429: Fake SendGrid error 429.' });
    expect(second.status).toBe('sent');
  });

  it.each([500, 502, 503])('reports retry for a %i', async (status) => {
    fake.answer([status]);

    const outcome = await transport().send(EMAIL);

    expect(outcome).toEqual({ status: 'retry', reason: `SendGrid answered ${status}: Fake SendGrid error ${status}.` });
  });

  it('reports failed for a 400 with the errors[].message texts of the answer', async () => {
    fake.answer([
      { status: 400, errors: ['The from address does not match a verified Sender Identity.', 'Invalid subject.'] },
    ]);

    const outcome = await transport().send(EMAIL);

    expect(outcome).toEqual({
      status: 'failed',
      reason: 'SendGrid answered 400: The from address does not match a verified Sender Identity.; Invalid subject.',
    });
  });

  it.each([401, 403, 413])('reports failed for a %i', async (status) => {
    fake.answer([status]);

    const outcome = await transport().send(EMAIL);

    expect(outcome.status).toBe('failed');
  });

  it('never puts the key in a reason, even when the answer echoes it', async () => {
    fake.answer([
      { status: 400, errors: [`The API key ${API_KEY} is not allowed to send.`, `Authorization: Bearer ${API_KEY}`] },
    ]);

    const outcome = await transport().send(EMAIL);

    expect(outcome.status).toBe('failed');
    const reason = outcome.status === 'sent' ? '' : outcome.reason;
    expect(reason).not.toContain(API_KEY);
    expect(reason).not.toContain('fakeSecret');
    expect(reason).toBe(
      'SendGrid answered 400: The API key [redacted] is not allowed to send.; Authorization: Bearer [redacted]',
    );
  });

  it('reports retry, not a hang, when SendGrid does not answer before the deadline', async () => {
    fake.answer(['hang']);

    const outcome = await transport(200).send(EMAIL);

    expect(outcome).toEqual({ status: 'retry', reason: 'SendGrid did not answer: Timed out after 0.2 s.' });
  });

  it('reports retry when the connection is closed without an answer', async () => {
    fake.answer(['drop']);

    const outcome = await transport().send(EMAIL);

    expect(outcome.status).toBe('retry');
  });

  it('reports retry when nothing listens at the address', async () => {
    const closedPort = await unusedPort();

    const outcome = await sendgridTransport(API_KEY, {
      baseUrl: `http://127.0.0.1:${closedPort}`,
      timeoutMs: 2000,
    }).send(EMAIL);

    expect(outcome).toEqual({ status: 'retry', reason: 'SendGrid did not answer: Connection refused (ECONNREFUSED).' });
  });

  it('reports failed without a request when the key cannot be a header value', async () => {
    const outcome = await sendgridTransport('SG.key\r\nX-Injected: 1', { baseUrl: fake.url }).send(EMAIL);

    expect(outcome).toEqual({
      status: 'failed',
      reason: 'The SendGrid API key is empty or has characters an HTTP header cannot carry.',
    });
    expect(fake.requests).toEqual([]);
  });

  it('reports failed without a request when the email id cannot make a Message-ID', async () => {
    const outcome = await transport().send({ ...EMAIL, id: 'eml bad>id' });

    expect(outcome.status).toBe('failed');
    expect(fake.requests).toEqual([]);
  });
});

describe('redactSecret', () => {
  it('redacts every occurrence of the key, a tail cut off from its start, and any SendGrid-shaped key', () => {
    const other = 'SG.otherKeyId1234.otherSecret5678';

    expect(redactSecret(`a ${API_KEY} b ${API_KEY}`, API_KEY)).toBe('a [redacted] b [redacted]');
    expect(redactSecret(`cut at ${API_KEY.slice(0, 12)}`, API_KEY)).toBe('cut at [redacted]');
    expect(redactSecret(`someone else's ${other}`, API_KEY)).toBe("someone else's [redacted]");
    expect(redactSecret('nothing secret here', API_KEY)).toBe('nothing secret here');
  });
});

/** A port nothing listens on: bound, read, and released. */
async function unusedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
