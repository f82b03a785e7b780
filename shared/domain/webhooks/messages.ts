/**
 * The message and attempt operations of advanced webhooks (docs/decisions.md §11): listing messages with their
 * deliveries, listing attempts, resending a message to an endpoint, and recovering an endpoint's failed messages.
 * Each starts from the tenant's configuration (FAILED_PRECONDITION while webhooks are off) and reads only the
 * tenant's own partitions, so another API key's ids are simply not found.
 */
import { InvalidArgumentError, NotFoundError } from '../../core/errors';
import type { JobQueue } from '../../adapters/queue/queue';
import { ENDPOINT_NOT_FOUND, getEndpoint } from '../../db/webhook-endpoint';
import {
  addDelivery,
  failedDeliveries,
  getDeliveries,
  getMessage,
  getMessages,
  queryAttempts,
  queryMessageIds,
  restartDelivery,
  type MessageListing,
  type StoredAttempt,
  type StoredDelivery,
  type StoredMessage,
} from '../../db/webhook-message';
import { pageTokenAfter, readPageAfter } from '../../db/page-token';
import { requireWebhooksEnabled } from '../webhook-config';
import { enqueue } from '../delivery/jobs';

export const MESSAGE_NOT_FOUND = 'Message not found.';
/** How far back recover reaches (docs/decisions.md §11). */
export const RECOVER_WINDOW_MS = 14 * 24 * 60 * 60 * 1000;
/** Failed deliveries one recover call restarts at most; a larger backlog takes further calls (docs/api.md "Webhooks"). */
export const MAX_RECOVERED = 10_000;

async function requireEndpoint(apiKeyId: string, endpointId: string): Promise<void> {
  if ((await getEndpoint(apiKeyId, endpointId)) === undefined) throw new NotFoundError(ENDPOINT_NOT_FOUND);
}

function presentDelivery(delivery: StoredDelivery) {
  return {
    endpointId: delivery.endpointId,
    status: delivery.status,
    attempts: delivery.attempts,
    ...(delivery.status === 'pending' && delivery.nextAttemptAt !== undefined
      ? { nextAttemptAt: delivery.nextAttemptAt }
      : {}),
  };
}

function presentMessage(message: StoredMessage, deliveries: readonly StoredDelivery[]) {
  return {
    id: message.id,
    type: message.type,
    timestamp: message.timestamp,
    organizationId: message.organizationId,
    ...(message.documentId === undefined ? {} : { documentId: message.documentId }),
    payload: JSON.parse(message.payload) as Record<string, unknown>,
    deliveries: deliveries.map(presentDelivery),
  };
}

export interface ListMessagesInput extends MessageListing {
  pageSize: number;
  pageToken?: string;
}

export async function listMessages(apiKeyId: string, input: ListMessagesInput) {
  await requireWebhooksEnabled(apiKeyId);
  const { pageSize, pageToken, ...listing } = input;
  if (listing.endpointId !== undefined) await requireEndpoint(apiKeyId, listing.endpointId);
  const scope = { tenant: apiKeyId, query: { operation: 'webhook-messages', ...listing } };
  const page = await queryMessageIds(apiKeyId, listing, {
    size: pageSize,
    after: await readPageAfter(pageToken, scope),
  });
  const found = new Map((await getMessages(apiKeyId, page.items)).map((message) => [message.id, message]));
  const messages = page.items.flatMap((id) => found.get(id) ?? []);
  const deliveries = await getDeliveries(apiKeyId, messages, { consistent: false });
  return {
    messages: messages.map((message) => presentMessage(message, deliveries.get(message.id) ?? [])),
    pageToken: await pageTokenAfter(scope, page.after),
  };
}

export function presentAttempt(attempt: StoredAttempt) {
  return {
    id: attempt.id,
    messageId: attempt.messageId,
    endpointId: attempt.endpointId,
    attempt: attempt.attempt,
    timestamp: attempt.timestamp,
    url: attempt.url,
    status: attempt.status,
    responseStatusCode: attempt.responseStatusCode,
    responseBody: attempt.responseBody,
    ...(attempt.error === undefined ? {} : { error: attempt.error }),
    durationMs: attempt.durationMs,
  };
}

export interface ListAttemptsInput {
  messageId?: string;
  endpointId?: string;
  pageSize: number;
  pageToken?: string;
}

export async function listAttempts(apiKeyId: string, input: ListAttemptsInput) {
  await requireWebhooksEnabled(apiKeyId);
  const { pageSize, pageToken, ...by } = input;
  if (by.endpointId !== undefined) await requireEndpoint(apiKeyId, by.endpointId);
  if (by.messageId !== undefined && (await getMessage(apiKeyId, by.messageId)) === undefined)
    throw new NotFoundError(MESSAGE_NOT_FOUND);
  const scope = { tenant: apiKeyId, query: { operation: 'webhook-attempts', ...by } };
  const page = await queryAttempts(apiKeyId, by, { size: pageSize, after: await readPageAfter(pageToken, scope) });
  return { attempts: page.items.map(presentAttempt), pageToken: await pageTokenAfter(scope, page.after) };
}

/** Sends the message to the endpoint again, in a new round of the schedule (or for the first time). */
export async function resendMessage(
  apiKeyId: string,
  input: { messageId: string; endpointId: string },
  queue: JobQueue,
  now = Date.now(),
) {
  await requireWebhooksEnabled(apiKeyId);
  const message = await getMessage(apiKeyId, input.messageId);
  if (message === undefined) throw new NotFoundError(MESSAGE_NOT_FOUND);
  await requireEndpoint(apiKeyId, input.endpointId);
  await addDelivery(apiKeyId, message, input.endpointId, now);
  const delivery = await restartDelivery(apiKeyId, message.id, input.endpointId, now);
  await enqueue(
    queue,
    [
      {
        kind: 'deliver',
        apiKeyId,
        messageId: message.id,
        endpointId: input.endpointId,
        attempt: delivery.attempts + 1,
        dueAt: now,
      },
    ],
    now,
  );
  return { messageId: message.id, endpointId: input.endpointId, status: 'pending' as const };
}

/** Attempts again every message that failed for the endpoint between `since` and `until` (ms). */
export async function recoverEndpoint(
  apiKeyId: string,
  input: { endpointId: string; since: number; until?: number },
  queue: JobQueue,
  now = Date.now(),
) {
  await requireWebhooksEnabled(apiKeyId);
  const until = input.until ?? now;
  if (input.since < now - RECOVER_WINDOW_MS) throw new InvalidArgumentError('since must be at most 14 days ago.');
  if (until < input.since) throw new InvalidArgumentError('until must not be before since.');
  await requireEndpoint(apiKeyId, input.endpointId);
  let recovered = 0;
  let after: string | undefined;
  do {
    const page = await failedDeliveries(apiKeyId, input.endpointId, input.since, until, { size: 100, after });
    const restarted = await Promise.all(
      page.items.map((messageId) => restartDelivery(apiKeyId, messageId, input.endpointId, now)),
    );
    await enqueue(
      queue,
      restarted.map((delivery) => ({
        kind: 'deliver' as const,
        apiKeyId,
        messageId: delivery.messageId,
        endpointId: input.endpointId,
        attempt: delivery.attempts + 1,
        dueAt: now,
      })),
      now,
    );
    recovered += restarted.length;
    after = page.after;
  } while (after !== undefined && recovered < MAX_RECOVERED);
  return { endpointId: input.endpointId, recovered };
}
