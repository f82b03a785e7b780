/**
 * Webhook signatures (shared/crypto/webhook-signature.ts) as a receiver sees them: sent with postJson to a local
 * receiver and verified, unmodified, by the `standardwebhooks` and `svix` packages (docs/decisions.md §11).
 */
import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { postJson } from '../../shared/adapters/http/outbound-http';
import { generateWebhookSecret } from '../../shared/crypto/webhook-secret';
import { webhookHeaders } from '../../shared/crypto/webhook-signature';
import { startReceiver, type LocalReceiver, type ReceivedRequest } from '../support/local-receiver';

const MESSAGE_ID = 'msg_01J0000000ABCDEFGHJKMNPQRS';
const BODY = JSON.stringify({
  type: 'comment.add',
  timestamp: '2025-01-01T00:00:00.000Z',
  data: { text: 'héllo ✓ <b>', n: 1 },
});
const now = () => Math.floor(Date.now() / 1000);

/** The received headers as a verifier takes them: name to single value. */
function headersOf(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])),
  );
}

let receiver: LocalReceiver;

beforeEach(async () => {
  receiver = await startReceiver();
});

afterEach(async () => {
  await receiver.close();
});

async function deliver(secrets: readonly string[], timestamp = now()): Promise<ReceivedRequest> {
  const result = await postJson(receiver.url, webhookHeaders(MESSAGE_ID, timestamp, BODY, secrets), BODY, {
    timeoutMs: 2000,
    allowPrivate: true,
  });
  expect(result.statusCode).toBe(204);
  expect(receiver.received).toHaveLength(1);
  return receiver.received[0];
}

describe('webhookHeaders', () => {
  it('sends content-type, webhook-id, webhook-timestamp and one v1 signature', async () => {
    const secret = generateWebhookSecret();
    const timestamp = now();

    const received = await deliver([secret], timestamp);

    expect(received.body).toBe(BODY);
    expect(received.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': MESSAGE_ID,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/),
    });
  });

  it('is accepted as it is by the standardwebhooks and svix verifiers', async () => {
    const secret = generateWebhookSecret();

    const received = await deliver([secret]);

    expect(new StandardWebhook(secret).verify(received.body, headersOf(received))).toEqual(JSON.parse(BODY));
    expect(new SvixWebhook(secret).verify(received.body, headersOf(received))).toEqual(JSON.parse(BODY));
  });

  it('signs with both secrets during a rotation, so either one alone verifies', async () => {
    const previous = generateWebhookSecret();
    const current = generateWebhookSecret();

    const received = await deliver([current, previous]);

    expect(headersOf(received)['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(new StandardWebhook(secret).verify(received.body, headersOf(received))).toEqual(JSON.parse(BODY));
      expect(new SvixWebhook(secret).verify(received.body, headersOf(received))).toEqual(JSON.parse(BODY));
    }
    const stranger = generateWebhookSecret();
    expect(() => new StandardWebhook(stranger).verify(received.body, headersOf(received))).toThrow(
      'No matching signature found',
    );
    expect(() => new SvixWebhook(stranger).verify(received.body, headersOf(received))).toThrow(
      'No matching signature found',
    );
  });

  it('is HMAC-SHA256 over "<id>.<timestamp>.<body>" keyed by the decoded secret, as the decisions spell it out', () => {
    const secret = generateWebhookSecret();
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${MESSAGE_ID}.1700000000.${BODY}`).digest('base64');

    expect(webhookHeaders(MESSAGE_ID, 1_700_000_000, BODY, [secret])['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('fails verification when a byte of the body changes', async () => {
    const secret = generateWebhookSecret();

    const received = await deliver([secret]);

    expect(() => new SvixWebhook(secret).verify(received.body.replace('1}', '2}'), headersOf(received))).toThrow();
  });

  it('refuses to sign without a secret or with a fractional timestamp', () => {
    expect(() => webhookHeaders(MESSAGE_ID, now(), BODY, [])).toThrow('at least one signing secret');
    expect(() => webhookHeaders(MESSAGE_ID, 1.5, BODY, [generateWebhookSecret()])).toThrow('whole Unix seconds');
  });
});
