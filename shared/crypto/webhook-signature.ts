/**
 * The headers of one webhook attempt (docs/decisions.md §11 "Payload and signature"), signed as Standard Webhooks:
 * `webhook-signature` is `v1,` + base64 of HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`, keyed by
 * the base64-decoded part of the secret after `whsec_`, one per valid secret, space-separated (during a rotation
 * both the new and the previous secret sign, so a receiver holding either verifies).
 *
 * The signing is the `standardwebhooks` package's own `Webhook.sign`, the reference implementation the
 * `standardwebhooks` and `svix` verifiers are built on, so what is sent is exactly what they check.
 */
import { Webhook } from 'standardwebhooks';

/**
 * `content-type`, `webhook-id`, `webhook-timestamp` and `webhook-signature` for `body` (the exact bytes sent).
 * `messageId` is the message's id (`msg_…`, the same on every attempt), `timestampSeconds` the Unix time of this
 * attempt, `secrets` the endpoint's valid secrets (`whsec_…`), newest first. Throws when there is no secret or a
 * secret's key part is not base64 (standardwebhooks' own check): a message is never sent unsigned.
 */
export function webhookHeaders(
  messageId: string,
  timestampSeconds: number,
  body: string,
  secrets: readonly string[],
): Record<string, string> {
  if (secrets.length === 0) throw new Error('A webhook needs at least one signing secret.');
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new Error(`The webhook timestamp must be whole Unix seconds, got ${timestampSeconds}.`);
  }
  const signedAt = new Date(timestampSeconds * 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, signedAt, body)).join(' '),
  };
}
