/**
 * The SES transport (shared/adapters/email/ses-transport.ts) through a real SESv2Client whose HTTP handler is a stand-in:
 * the SDK's own serializer builds the SendEmail request and its own deserializer reads SES's answers and errors.
 */
import { SESv2Client } from '@aws-sdk/client-sesv2';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import { simpleParser } from 'mailparser';
import type { OutgoingEmail } from '../../shared/adapters/email/email-message';
import { sesErrorOutcome, sesTransport } from '../../shared/adapters/email/ses-transport';

const EMAIL: OutgoingEmail = {
  id: 'eml_01SESTEST',
  from: { address: 'notify@acme.example', name: 'Acme' },
  to: { address: 'bob@example.org', name: 'Bob' },
  subject: 'Ann Lee mentioned you in Roadmap',
  html: '<p>Ann Lee mentioned you in Roadmap</p>',
  text: 'Ann Lee mentioned you in Roadmap\n',
};

interface SesAnswer {
  status: number;
  body: Record<string, unknown>;
  /** SES's error type, sent as `x-amzn-errortype` as the REST-JSON protocol does. */
  errorType?: string;
}

interface RecordedRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

/** An SESv2Client answering each request with the next of `answers`, recording what it sent. */
function fakeSes(answers: SesAnswer[]): { client: SESv2Client; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const requestHandler = {
    async handle(request: HttpRequest): Promise<{ response: HttpResponse }> {
      const text =
        typeof request.body === 'string' ? request.body : new TextDecoder().decode(request.body as Uint8Array);
      requests.push({ method: request.method, path: request.path, body: JSON.parse(text) as Record<string, unknown> });
      const answer = answers.shift() ?? { status: 200, body: { MessageId: 'ses-default' } };
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (answer.errorType !== undefined) headers['x-amzn-errortype'] = answer.errorType;
      return { response: { statusCode: answer.status, headers, body: Buffer.from(JSON.stringify(answer.body)) } };
    },
  };
  const client = new SESv2Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
    requestHandler,
  });
  return { client, requests };
}

describe('sesTransport', () => {
  it('sends the composed message as raw content from the From address to the recipient, and reports SES MessageId', async () => {
    const { client, requests } = fakeSes([{ status: 200, body: { MessageId: 'ses-message-1' } }]);

    const outcome = await sesTransport({ client, configurationSetName: undefined, identityArn: undefined }).send(EMAIL);

    expect(outcome).toEqual({ status: 'sent', providerMessageId: 'ses-message-1' });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v2/email/outbound-emails');
    expect(request.body).toEqual({
      FromEmailAddress: 'notify@acme.example',
      Destination: { ToAddresses: ['bob@example.org'] },
      Content: { Raw: { Data: expect.any(String) } },
    });
    const raw = Buffer.from((request.body.Content as { Raw: { Data: string } }).Raw.Data, 'base64');
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe(EMAIL.subject);
    expect(parsed.messageId).toBe('<eml_01SESTEST@acme.example>');
    expect(parsed.text).toBe(EMAIL.text);
    expect(parsed.html).toBe(EMAIL.html);
  });

  it('names the configuration set and the sending identity when they are configured', async () => {
    const { client, requests } = fakeSes([]);
    const identityArn = 'arn:aws:ses:us-east-1:123456789012:identity/acme.example';

    await sesTransport({ client, configurationSetName: 'notifications', identityArn }).send(EMAIL);

    expect(requests[0].body).toMatchObject({
      ConfigurationSetName: 'notifications',
      FromEmailAddressIdentityArn: identityArn,
    });
  });

  it('reports retry when SES throttles the send', async () => {
    const { client } = fakeSes([
      { status: 429, errorType: 'TooManyRequestsException', body: { message: 'Maximum sending rate exceeded.' } },
    ]);

    const outcome = await sesTransport({ client }).send(EMAIL);

    expect(outcome).toEqual({
      status: 'retry',
      reason: 'SES TooManyRequestsException (429): Maximum sending rate exceeded.',
    });
  });

  it("reports failed with SES's reason when SES rejects the message", async () => {
    const { client } = fakeSes([
      { status: 400, errorType: 'MessageRejected', body: { message: 'Email address is not verified.' } },
    ]);

    const outcome = await sesTransport({ client }).send(EMAIL);

    expect(outcome).toEqual({ status: 'failed', reason: 'SES MessageRejected (400): Email address is not verified.' });
  });

  it("reports retry for an error of SES's own making (5xx)", async () => {
    const { client } = fakeSes([
      { status: 503, errorType: 'ServiceUnavailable', body: { message: 'Service unavailable.' } },
    ]);

    const outcome = await sesTransport({ client }).send(EMAIL);

    expect(outcome.status).toBe('retry');
  });

  it('reports failed, sending nothing, when the email cannot be composed', async () => {
    const { client, requests } = fakeSes([]);

    const outcome = await sesTransport({ client }).send({ ...EMAIL, from: { address: 'not-an-address' } });

    expect(outcome.status).toBe('failed');
    expect(requests).toEqual([]);
  });
});

describe('sesErrorOutcome', () => {
  const sdkError = (name: string, httpStatusCode?: number) =>
    Object.assign(new Error(`${name} happened`), {
      name,
      ...(httpStatusCode === undefined ? {} : { $metadata: { httpStatusCode } }),
    });

  it.each([
    ['TooManyRequestsException', 429],
    ['ThrottlingException', 400],
    ['LimitExceededException', 400],
    ['SendingPausedException', 400],
    ['ExpiredTokenException', 400],
    ['InternalFailure', 500],
    ['SomethingNew', 503],
  ])('retries %s (%i)', (name, status) => {
    expect(sesErrorOutcome(sdkError(name, status), 10_000).status).toBe('retry');
  });

  it.each([
    ['MessageRejected', 400],
    ['MailFromDomainNotVerifiedException', 400],
    ['NotFoundException', 404],
    ['BadRequestException', 400],
    ['AccountSuspendedException', 400],
    ['AccessDeniedException', 403],
  ])('fails %s (%i) for good', (name, status) => {
    expect(sesErrorOutcome(sdkError(name, status), 10_000)).toEqual({
      status: 'failed',
      reason: `SES ${name} (${status}): ${name} happened`,
    });
  });

  it('retries a network error, which has no HTTP status', () => {
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED' });

    expect(sesErrorOutcome(error, 10_000)).toEqual({
      status: 'retry',
      reason: 'SES Error: connect ECONNREFUSED 127.0.0.1:443',
    });
  });

  it('retries a send the deadline aborted', () => {
    expect(sesErrorOutcome(Object.assign(new Error('aborted'), { name: 'AbortError' }), 10_000)).toEqual({
      status: 'retry',
      reason: 'SES did not answer within 10 s.',
    });
  });
});
