/**
 * One delivery attempt (docs/decisions.md §11 "Delivery"): the job's delivery, if it still stands where the job
 * expects, is POSTed to its endpoint signed with every valid secret of the endpoint; the attempt is recorded with
 * its status, the first 1 KB of the answer and its duration; then the delivery succeeds, waits for its next
 * attempt on the schedule (a queued job), or fails for good, which emits `message.attempt.exhausted` to the
 * tenant's other endpoints that want it. A job handed out twice makes at most one recorded outcome (the outcome's
 * write is conditional on the attempt count), though the receiver may see the request twice, with one webhook-id.
 * A resend or recovery made while an attempt is in flight is not lost when that attempt ends: the attempt counts,
 * and the delivery is attempted again at once (the outcome's write is conditional on the delivery's rounds too).
 * What must follow a failed attempt is owed on the delivery (`followUp`) until done, so a worker that dies between
 * the outcome and the next job loses nothing: the job comes back (the queue's visibility timeout) and finishes it.
 */
import { config } from '../../core/config';
import { derivedId } from '../../core/ids';
import { postJson, type OutboundResult } from '../../adapters/http/outbound-http';
import { webhookHeaders } from '../../crypto/webhook-signature';
import { consumeRateLimit } from '../../db/rate-limit';
import { recordEndpointOutcome, type StoredEndpoint } from '../../db/webhook-endpoint';
import {
  abandonDelivery,
  clearFollowUp,
  putAttempt,
  readAttemptContext,
  recordAttemptOutcome,
  recordSupersededAttempt,
  type StoredAttempt,
  type StoredDelivery,
  type StoredMessage,
} from '../../db/webhook-message';
import { readWebhookConfig } from '../webhook-config';
import { signingSecrets } from './endpoints';
import { MESSAGE_ID_PREFIX } from './events';
import { enqueue, isDue, type DeliveryJob, type JobDeps } from '../delivery/jobs';
import { publishEvent } from './publish';
import { retryDelayMs } from '../delivery/schedule';

export const EXHAUSTED_EVENT = 'message.attempt.exhausted';
const ATTEMPT_ID_PREFIX = 'atmpt_';

export async function runDelivery(job: Extract<DeliveryJob, { kind: 'deliver' }>, deps: JobDeps): Promise<void> {
  const clock = deps.now ?? Date.now;
  if (!isDue(job, clock())) {
    await enqueue(deps.queue, [job], clock());
    return;
  }
  const { apiKeyId, messageId, endpointId } = job;
  const { delivery, message, endpoint } = await readAttemptContext(apiKeyId, messageId, endpointId);
  if (delivery === undefined || message === undefined) return;
  // This job's attempt was made and recorded, but the worker stopped before what follows it: finish that.
  if (delivery.attempts === job.attempt && delivery.followUp === true) {
    await followUp(job, delivery, message, deps, clock());
    return;
  }
  if (delivery.status !== 'pending' || delivery.attempts !== job.attempt - 1) return;
  if (endpoint === undefined || endpoint.disabled) {
    // Deleted or disabled since: deliveries to it stop at once (recover may send them again once it is enabled).
    await abandonDelivery(apiKeyId, delivery);
    return;
  }
  if (endpoint.rateLimit !== null) {
    const decision = await consumeRateLimit(
      'webhook-endpoint',
      `${apiKeyId}/${endpointId}`,
      endpoint.rateLimit,
      1,
      clock(),
    );
    if (!decision.allowed) {
      // Waits for the next second's share; not an attempt.
      await enqueue(deps.queue, [{ ...job, dueAt: clock() + 1000 }], clock());
      return;
    }
  }
  const started = clock();
  const result = await attempt(message, endpoint, apiKeyId, deps, started);
  const success = result.error === undefined && result.statusCode >= 200 && result.statusCode < 300;
  const made: StoredAttempt = {
    id: derivedId(ATTEMPT_ID_PREFIX, apiKeyId, messageId, endpointId, String(job.attempt)),
    messageId,
    endpointId,
    attempt: job.attempt,
    timestamp: started,
    url: endpoint.url,
    status: success ? 'success' : 'failed',
    responseStatusCode: result.statusCode,
    responseBody: result.responseBody,
    ...(result.error === undefined ? {} : { error: result.error }),
    durationMs: result.durationMs,
  };
  await putAttempt(apiKeyId, made);

  const finished = clock();
  // A message without a body fails for good at once: its payload was fixed when it was made, retrying cannot help.
  const wait =
    success || message.undeliverable !== undefined ? undefined : retryDelayMs(delivery.attempts + 1 - delivery.round);
  const next = success
    ? { status: 'success' as const }
    : wait === undefined
      ? { status: 'failed' as const }
      : { status: 'pending' as const, nextAttemptAt: finished + wait };
  const owed = next.status === 'pending' || (next.status === 'failed' && message.type !== EXHAUSTED_EVENT);
  if (!(await recordAttemptOutcome(apiKeyId, delivery, { ...next, followUp: owed }))) {
    // A resend or recovery started a new round while this attempt was in flight: it counts, and the round it did
    // not see gets an attempt of its own, now, whatever this one's outcome.
    if (await recordSupersededAttempt(apiKeyId, delivery, finished)) {
      const attempts = delivery.attempts + 1;
      const due = { ...delivery, status: 'pending' as const, attempts, round: attempts, nextAttemptAt: finished };
      await followUp(job, due, message, deps, finished);
    }
    return;
  }
  // A success changes nothing on an endpoint that was not failing: no write then. A message without a body says
  // nothing about the endpoint (the tenant's key failed), so it does not count towards disabling it.
  if (message.undeliverable === undefined && (!success || endpoint.failingSince !== undefined))
    await recordEndpointOutcome(apiKeyId, endpointId, success ? 'success' : 'failure', finished);
  if (owed) await followUp(job, { ...delivery, ...next, attempts: delivery.attempts + 1 }, message, deps, finished);
}

/** The POST of one attempt; a message that has no body fails without a request, its reason recorded. */
async function attempt(
  message: StoredMessage,
  endpoint: StoredEndpoint,
  apiKeyId: string,
  deps: JobDeps,
  started: number,
): Promise<OutboundResult> {
  if (message.undeliverable !== undefined)
    return { statusCode: 0, responseBody: '', error: message.undeliverable, durationMs: 0 };
  const secrets = await signingSecrets(endpoint, apiKeyId, deps.decrypt, started);
  const headers = webhookHeaders(message.id, Math.floor(started / 1000), message.payload, secrets);
  return postJson(endpoint.url, headers, message.payload, {
    timeoutMs: config.webhookTimeoutMs,
    allowPrivate: config.webhookAllowPrivateUrls,
  });
}

/**
 * What follows a failed attempt, once its outcome is recorded: the next attempt's job, or, after the last one,
 * `message.attempt.exhausted` to the key's other endpoints (its id derived, so sending it twice makes one
 * message). Then the delivery's `followUp` is cleared.
 */
async function followUp(
  job: Extract<DeliveryJob, { kind: 'deliver' }>,
  delivery: StoredDelivery,
  message: StoredMessage,
  deps: JobDeps,
  now: number,
): Promise<void> {
  const { apiKeyId, messageId, endpointId } = job;
  if (delivery.status === 'pending') {
    await enqueue(deps.queue, [{ ...job, attempt: delivery.attempts + 1, dueAt: delivery.nextAttemptAt ?? now }], now);
  } else if (delivery.status === 'failed' && message.type !== EXHAUSTED_EVENT) {
    const webhookConfig = await readWebhookConfig(apiKeyId);
    if (webhookConfig.isEnabled) {
      await publishEvent(
        apiKeyId,
        {
          id: derivedId(MESSAGE_ID_PREFIX, apiKeyId, EXHAUSTED_EVENT, messageId, endpointId, String(delivery.round)),
          type: EXHAUSTED_EVENT,
          timestamp: now,
          organizationId: message.organizationId,
          ...(message.documentId === undefined ? {} : { documentId: message.documentId }),
          data: { messageId, endpointId, type: message.type },
        },
        deps.queue,
        webhookConfig,
        { except: endpointId, now },
      );
    }
  }
  await clearFollowUp(apiKeyId, delivery, delivery.attempts);
}
