/**
 * Advanced webhook messages, their deliveries (one per endpoint the message was fanned out to) and the attempts
 * of each delivery (docs/decisions.md §11). A message and everything about it share one partition, so one Query
 * reads a message's attempts and a delivery is read or written by key (M = T#<key>#WHMSG#<messageId>):
 *
 *   pk M   sk MSG                       the message: type, timestamp, organizationId, documentId, payload (the
 *                                       body as sent, a JSON string), endpointIds (the deliveries it has),
 *                                       undeliverable (why no body could be made, when none could)
 *      gsi1: T#<key>#WHMSGS / <ts>#<messageId>                 the tenant's messages in time order
 *      gsi2: T#<key>#WHMSGS#ORG#<org> / <ts>#<messageId>       an organization's messages
 *   pk M   sk DLV#<endpointId>          a delivery: status, attempts, round (attempts before the current round of
 *                                       the schedule: a resend or a recovery starts a new one), restarts (how many
 *                                       rounds were started so, absent for none), nextAttemptAt
 *      gsi1: T#<key>#WHEP#<endpointId>#DLVS / <ts>#<messageId>   an endpoint's deliveries (messages/get by endpoint)
 *      gsi2 (failed only): T#<key>#WHEP#<endpointId>#FAILED / <ts>#<messageId>   what recover re-sends
 *   pk M   sk ATT#<ts>#<attemptId>      an attempt: attempt number, endpointId, url, status, responseStatusCode,
 *                                       responseBody (first 1 KB), error, durationMs
 *      gsi1: T#<key>#WHEP#<endpointId>#ATTS / <ts>#<attemptId>   an endpoint's attempts
 *   pk T#<key>   sk WHDEBOUNCE#<org>#<doc>#<editor>   the CRDT debounce of one editor (latest, emitted, scheduled)
 *
 * `<ts>` is the message's (or attempt's) time in ms, zero-padded. Every item expires 30 days after its message
 * (TTL), so the history costs nothing to keep. Message ids are derived from what caused them (see
 * shared/domain/webhooks/events.ts), so a message is written once however often its cause is seen.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { coalesced } from '../core/coalesce';
import {
  batchGet,
  batchWrite,
  byKey,
  getTogether,
  keyOfItem,
  keyString,
  putRequest,
  type Item,
  type ItemKey,
} from './batch';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, segment, sortableNumber, tenantKey } from './keys';
import { readPage, type Listing, type Page } from './query';
import { TTL_ATTRIBUTE } from './table-definition';
import { endpointKey, toEndpoint, type StoredEndpoint } from './webhook-endpoint';

/** Messages and attempts are kept this long (docs/decisions.md §11). */
export const MESSAGE_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export type DeliveryStatus = 'pending' | 'success' | 'failed';

export interface StoredMessage {
  id: string;
  type: string;
  /** ms */
  timestamp: number;
  organizationId: string;
  documentId?: string;
  /** The body as sent: JSON text of `{type, timestamp, data}` (shaped by the tenant's configuration). */
  payload: string;
  endpointIds: string[];
  /**
   * Why the body could not be made (the tenant's public key cannot encrypt): `payload` then holds `{type,
   * timestamp}` without the data, and every attempt fails with this error, recorded, without a request.
   */
  undeliverable?: string;
}

export interface StoredDelivery {
  messageId: string;
  endpointId: string;
  status: DeliveryStatus;
  /** Attempts made, all rounds. */
  attempts: number;
  /** Attempts made before the current round began: the schedule counts from here. */
  round: number;
  /**
   * Rounds started by a resend or a recovery (absent: none). An attempt's outcome is written only if this has not
   * changed since the attempt read the delivery: a round started while the attempt was in flight is not ended by it.
   */
  restarts?: number;
  /** ms; set while pending. */
  nextAttemptAt?: number;
  /**
   * Set with an attempt's outcome when something must follow it (the next attempt's job, or the exhausted
   * event) and cleared once that is done: a worker that dies in between leaves it set, and the attempt's job,
   * handed out again, finishes the work (shared/domain/webhooks/delivery.ts).
   */
  followUp?: boolean;
  /** The message's type, organization and time, copied for the endpoint's listing. */
  type: string;
  organizationId: string;
  timestamp: number;
}

export interface StoredAttempt {
  id: string;
  messageId: string;
  endpointId: string;
  attempt: number;
  /** ms */
  timestamp: number;
  url: string;
  status: 'success' | 'failed';
  responseStatusCode: number;
  responseBody: string;
  error?: string;
  durationMs: number;
}

const messagePartition = (apiKeyId: string, messageId: string) => tenantKey(apiKeyId, 'WHMSG', segment(messageId));
const MESSAGE_SK = 'MSG';
const deliverySk = (endpointId: string) => key('DLV', segment(endpointId));
const tenantMessages = (apiKeyId: string) => tenantKey(apiKeyId, 'WHMSGS');
const organizationMessages = (apiKeyId: string, organizationId: string) =>
  tenantKey(apiKeyId, 'WHMSGS', 'ORG', segment(organizationId));
const endpointPartition = (apiKeyId: string, endpointId: string, what: 'DLVS' | 'FAILED' | 'ATTS') =>
  tenantKey(apiKeyId, 'WHEP', segment(endpointId), what);
const position = (timestamp: number, id: string) => key(sortableNumber(timestamp), segment(id));

export const messageKey = (apiKeyId: string, messageId: string): ItemKey => ({
  pk: messagePartition(apiKeyId, messageId),
  sk: MESSAGE_SK,
});
export const deliveryKey = (apiKeyId: string, messageId: string, endpointId: string): ItemKey => ({
  pk: messagePartition(apiKeyId, messageId),
  sk: deliverySk(endpointId),
});

/** The keys that put a failed delivery into its endpoint's failed index (gsi2), which recover reads. */
const failedIndexValues = (
  apiKeyId: string,
  delivery: Pick<StoredDelivery, 'endpointId' | 'messageId' | 'timestamp'>,
) => ({
  ':g2': endpointPartition(apiKeyId, delivery.endpointId, 'FAILED'),
  ':g2sk': position(delivery.timestamp, delivery.messageId),
});

const expiry = (timestamp: number) => Math.ceil((timestamp + MESSAGE_RETENTION_MS) / 1000);

function messageItem(apiKeyId: string, message: StoredMessage): Item {
  const at = position(message.timestamp, message.id);
  return {
    ...messageKey(apiKeyId, message.id),
    ...message,
    gsi1pk: tenantMessages(apiKeyId),
    gsi1sk: at,
    gsi2pk: organizationMessages(apiKeyId, message.organizationId),
    gsi2sk: at,
    [TTL_ATTRIBUTE]: expiry(message.timestamp),
  };
}

function deliveryItem(apiKeyId: string, delivery: StoredDelivery): Item {
  return {
    ...deliveryKey(apiKeyId, delivery.messageId, delivery.endpointId),
    ...delivery,
    gsi1pk: endpointPartition(apiKeyId, delivery.endpointId, 'DLVS'),
    gsi1sk: position(delivery.timestamp, delivery.messageId),
    [TTL_ATTRIBUTE]: expiry(delivery.timestamp),
  };
}

function toMessage(item: Item): StoredMessage {
  return {
    id: String(item.id),
    type: String(item.type),
    timestamp: Number(item.timestamp),
    organizationId: String(item.organizationId),
    ...(typeof item.documentId === 'string' ? { documentId: item.documentId } : {}),
    payload: String(item.payload),
    endpointIds: Array.isArray(item.endpointIds) ? item.endpointIds.map(String) : [],
    ...(typeof item.undeliverable === 'string' ? { undeliverable: item.undeliverable } : {}),
  };
}

function toDelivery(item: Item): StoredDelivery {
  return {
    messageId: String(item.messageId),
    endpointId: String(item.endpointId),
    status: item.status as DeliveryStatus,
    attempts: Number(item.attempts),
    round: Number(item.round ?? 0),
    ...(typeof item.restarts === 'number' && item.restarts > 0 ? { restarts: item.restarts } : {}),
    ...(typeof item.nextAttemptAt === 'number' ? { nextAttemptAt: item.nextAttemptAt } : {}),
    ...(item.followUp === true ? { followUp: true } : {}),
    type: String(item.type),
    organizationId: String(item.organizationId),
    timestamp: Number(item.timestamp),
  };
}

function toAttempt(item: Item): StoredAttempt {
  return {
    id: String(item.id),
    messageId: String(item.messageId),
    endpointId: String(item.endpointId),
    attempt: Number(item.attempt),
    timestamp: Number(item.timestamp),
    url: String(item.url),
    status: item.status as StoredAttempt['status'],
    responseStatusCode: Number(item.responseStatusCode),
    responseBody: String(item.responseBody),
    ...(typeof item.error === 'string' ? { error: item.error } : {}),
    durationMs: Number(item.durationMs),
  };
}

/** A message of one tenant, as the events worker publishes several at once. */
export interface TenantMessage {
  apiKeyId: string;
  message: StoredMessage;
}

/**
 * Writes each new message with a pending delivery per endpoint, in as few requests as DynamoDB allows: one
 * strongly consistent BatchGetItem finds the messages that exist already (their cause was seen before: those are
 * returned and nothing of them is written, the caller resumes from what is stored), then one BatchWriteItem per 25
 * deliveries and then one per 25 messages. The deliveries go first, so a stored message always has all of its
 * deliveries, and no delivery job exists before its message does: a message found missing here has had no attempt,
 * and writing its deliveries again cannot undo one.
 *
 * Checking first and then writing (instead of a conditional put per message, which BatchWriteItem cannot make) is
 * safe because one cause is only ever published by one worker at a time: a stream shard's records, and every
 * record of one source item, go to one events-worker invocation at a time (parallelization factor 1), and the
 * `message.attempt.exhausted` of a delivery is published by the worker that recorded its last outcome (or, once
 * that worker stopped, by its job's next receive). Should a queue ever hand one job to two workers at the same
 * moment, the worst case is a delivery made twice with one webhook-id, which receivers are told to deduplicate.
 */
export async function createMessages(messages: readonly TenantMessage[]): Promise<TenantMessage[]> {
  if (messages.length === 0) return [];
  const stored = new Set(
    (
      await batchGet(
        messages.map(({ apiKeyId, message }) => messageKey(apiKeyId, message.id)),
        { consistent: true },
      )
    ).map((item) => keyString(keyOfItem(item))),
  );
  const existing = messages.filter(({ apiKeyId, message }) => stored.has(keyString(messageKey(apiKeyId, message.id))));
  const fresh = messages.filter((entry) => !existing.includes(entry));
  await batchWrite(
    fresh.flatMap(({ apiKeyId, message }) =>
      message.endpointIds.map((endpointId) =>
        putRequest(deliveryItem(apiKeyId, newDelivery(message, endpointId, message.timestamp))),
      ),
    ),
  );
  await batchWrite(fresh.map(({ apiKeyId, message }) => putRequest(messageItem(apiKeyId, message))));
  return existing;
}

export function newDelivery(
  message: Pick<StoredMessage, 'id' | 'type' | 'organizationId' | 'timestamp'>,
  endpointId: string,
  now: number,
): StoredDelivery {
  return {
    messageId: message.id,
    endpointId,
    status: 'pending',
    attempts: 0,
    round: 0,
    nextAttemptAt: now,
    type: message.type,
    organizationId: message.organizationId,
    timestamp: message.timestamp,
  };
}

/** Writes the deliveries among `deliveries` that do not exist yet (a message whose fan-out stopped part way). */
export async function createMissingDeliveries(apiKeyId: string, deliveries: readonly StoredDelivery[]): Promise<void> {
  await Promise.all(
    deliveries.map(async (delivery) => {
      await unlessConditionFails(
        db.send(
          new PutCommand({
            TableName: TABLE_NAME,
            Item: deliveryItem(apiKeyId, delivery),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
    }),
  );
}

export async function getMessage(apiKeyId: string, messageId: string): Promise<StoredMessage | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: messageKey(apiKeyId, messageId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toMessage(Item);
}

/**
 * The messages of `messageIds` that exist. Eventually consistent: they serve listings, whose ids come from an index
 * (itself eventually consistent), so a strongly consistent read would double the cost and add no freshness.
 */
export async function getMessages(apiKeyId: string, messageIds: readonly string[]): Promise<StoredMessage[]> {
  return (
    await batchGet(
      messageIds.map((id) => messageKey(apiKeyId, id)),
      { consistent: false },
    )
  ).map(toMessage);
}

export async function getDelivery(
  apiKeyId: string,
  messageId: string,
  endpointId: string,
): Promise<StoredDelivery | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: deliveryKey(apiKeyId, messageId, endpointId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : toDelivery(Item);
}

// The delivery worker runs a batch's jobs side by side: their reads (`getTogether`), and their attempt records, are
// merged into one BatchGetItem and one BatchWriteItem (25) each (shared/core/coalesce.ts).
const putTogether = coalesced(
  async (items: readonly Item[]) => {
    // An attempt recorded twice in one window (a job handed out twice) is one item: a batch may not name a key twice.
    await batchWrite([...byKey(items).values()].map(putRequest));
    return items.map(() => undefined);
  },
  { windowMs: 5, maxBatch: 25 },
);

/**
 * What one attempt needs, strongly consistent: the delivery, its message and its endpoint (each undefined when it
 * does not exist); one BatchGetItem for all the attempts of a worker's batch.
 */
export async function readAttemptContext(
  apiKeyId: string,
  messageId: string,
  endpointId: string,
): Promise<{ delivery?: StoredDelivery; message?: StoredMessage; endpoint?: StoredEndpoint }> {
  const items = await getTogether([
    deliveryKey(apiKeyId, messageId, endpointId),
    messageKey(apiKeyId, messageId),
    endpointKey(apiKeyId, endpointId),
  ]);
  const found = (test: (sk: string) => boolean) => items.find((item) => test(String(item.sk)));
  const delivery = found((sk) => sk.startsWith('DLV#'));
  const message = found((sk) => sk === MESSAGE_SK);
  const endpoint = found((sk) => sk.startsWith('WHEP#'));
  return {
    ...(delivery === undefined ? {} : { delivery: toDelivery(delivery) }),
    ...(message === undefined ? {} : { message: toMessage(message) }),
    ...(endpoint === undefined ? {} : { endpoint: toEndpoint(endpoint) }),
  };
}

/**
 * The deliveries of `messages` (each message names its endpoints), keyed by message id. Strongly consistent unless
 * `consistent: false` (listings: a delivery's status may trail its latest attempt by a moment, at half the cost).
 */
export async function getDeliveries(
  apiKeyId: string,
  messages: readonly StoredMessage[],
  options: { consistent?: boolean } = {},
): Promise<Map<string, StoredDelivery[]>> {
  const keys = messages.flatMap((message) =>
    message.endpointIds.map((endpointId) => deliveryKey(apiKeyId, message.id, endpointId)),
  );
  const byMessage = new Map<string, StoredDelivery[]>(messages.map((message) => [message.id, []]));
  for (const delivery of (await batchGet(keys, { consistent: options.consistent ?? true })).map(toDelivery))
    byMessage.get(delivery.messageId)?.push(delivery);
  for (const deliveries of byMessage.values()) deliveries.sort((a, b) => a.endpointId.localeCompare(b.endpointId));
  return byMessage;
}

/**
 * Records the outcome of attempt `attempt` of a delivery that still stands at `attempt - 1` attempts, in the round
 * it was read in: a second worker handed the same job, or a resend or recovery made while the attempt was in flight,
 * makes the condition false (false returned). `next` is the delivery's state after the attempt.
 */
export async function recordAttemptOutcome(
  apiKeyId: string,
  delivery: StoredDelivery,
  next: { status: DeliveryStatus; nextAttemptAt?: number; followUp: boolean },
): Promise<boolean> {
  const sameRound =
    delivery.restarts === undefined
      ? { condition: 'attribute_not_exists(restarts)', values: {} }
      : { condition: 'restarts = :restarts', values: { ':restarts': delivery.restarts } };
  const failedIndex =
    next.status === 'failed'
      ? { set: ', gsi2pk = :g2, gsi2sk = :g2sk', values: failedIndexValues(apiKeyId, delivery) }
      : { set: '', values: {} };
  const written = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(apiKeyId, delivery.messageId, delivery.endpointId),
        UpdateExpression: `SET #status = :status, attempts = :attempts${next.nextAttemptAt === undefined ? '' : ', nextAttemptAt = :next'}${next.followUp ? ', followUp = :true' : ''}${failedIndex.set}${next.nextAttemptAt === undefined ? ' REMOVE nextAttemptAt' : ''}`,
        ConditionExpression: `attempts = :before AND #status = :pending AND ${sameRound.condition}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': next.status,
          ':attempts': delivery.attempts + 1,
          ':before': delivery.attempts,
          ':pending': 'pending',
          ...sameRound.values,
          ...(next.nextAttemptAt === undefined ? {} : { ':next': next.nextAttemptAt }),
          ...(next.followUp ? { ':true': true } : {}),
          ...failedIndex.values,
        },
      }),
    ),
  );
  return written !== undefined;
}

/**
 * Counts an attempt whose outcome was not written because a resend or recovery started a new round while it was in
 * flight: the delivery stays pending, due at `now`, its new round counting from after that attempt, and the next
 * attempt is owed (`followUp`). False when the delivery moved on otherwise (the new round's own attempt came first).
 */
export async function recordSupersededAttempt(
  apiKeyId: string,
  delivery: StoredDelivery,
  now: number,
): Promise<boolean> {
  const written = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(apiKeyId, delivery.messageId, delivery.endpointId),
        UpdateExpression: 'SET attempts = :attempts, round = :attempts, nextAttemptAt = :now, followUp = :true',
        ConditionExpression: 'attempts = :before AND #status = :pending AND restarts > :restarts',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':attempts': delivery.attempts + 1,
          ':before': delivery.attempts,
          ':pending': 'pending',
          ':restarts': delivery.restarts ?? 0,
          ':now': now,
          ':true': true,
        },
      }),
    ),
  );
  return written !== undefined;
}

/** Clears `followUp` once the work after attempt `attempts` is done (nothing when the delivery moved on). */
export async function clearFollowUp(
  apiKeyId: string,
  delivery: Pick<StoredDelivery, 'messageId' | 'endpointId'>,
  attempts: number,
): Promise<void> {
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(apiKeyId, delivery.messageId, delivery.endpointId),
        UpdateExpression: 'REMOVE followUp',
        ConditionExpression: 'attempts = :attempts',
        ExpressionAttributeValues: { ':attempts': attempts },
      }),
    ),
  );
}

/**
 * Ends a pending delivery as failed without an attempt (its endpoint was deleted or disabled since the message
 * was made); recover can send it again.
 */
export async function abandonDelivery(apiKeyId: string, delivery: StoredDelivery): Promise<void> {
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(apiKeyId, delivery.messageId, delivery.endpointId),
        UpdateExpression: 'SET #status = :failed, gsi2pk = :g2, gsi2sk = :g2sk REMOVE nextAttemptAt',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':failed': 'failed',
          ':pending': 'pending',
          ...failedIndexValues(apiKeyId, delivery),
        },
      }),
    ),
  );
}

/**
 * Fans a message out to one more endpoint (resend to an endpoint it was not sent to): the endpoint joins the
 * message's list and gets a pending delivery. Nothing changes when it has one already.
 */
export async function addDelivery(
  apiKeyId: string,
  message: StoredMessage,
  endpointId: string,
  now: number,
): Promise<void> {
  if (message.endpointIds.includes(endpointId)) return;
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: messageKey(apiKeyId, message.id),
        UpdateExpression: 'SET endpointIds = list_append(endpointIds, :endpoint)',
        ConditionExpression: 'attribute_exists(pk) AND NOT contains(endpointIds, :endpointId)',
        ExpressionAttributeValues: { ':endpoint': [endpointId], ':endpointId': endpointId },
      }),
    ),
  );
  await createMissingDeliveries(apiKeyId, [newDelivery(message, endpointId, now)]);
}

/**
 * Starts a new round of the schedule for an existing delivery (resend, recover): pending again, due now, out of
 * the failed index. Returns the delivery as it is after the change.
 */
export async function restartDelivery(
  apiKeyId: string,
  messageId: string,
  endpointId: string,
  now: number,
): Promise<StoredDelivery> {
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: deliveryKey(apiKeyId, messageId, endpointId),
      UpdateExpression:
        'SET #status = :pending, round = attempts, nextAttemptAt = :now, restarts = if_not_exists(restarts, :zero) + :one REMOVE gsi2pk, gsi2sk, followUp',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pending': 'pending', ':now': now, ':zero': 0, ':one': 1 },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toDelivery(Attributes ?? {});
}

/**
 * The attempt item's id, derived from its delivery and number, so an attempt recorded twice is one item. Written
 * with the other attempts of the worker's batch in one BatchWriteItem.
 */
export function putAttempt(apiKeyId: string, attempt: StoredAttempt): Promise<void> {
  const at = position(attempt.timestamp, attempt.id);
  return putTogether({
    pk: messagePartition(apiKeyId, attempt.messageId),
    sk: key('ATT', at),
    ...attempt,
    gsi1pk: endpointPartition(apiKeyId, attempt.endpointId, 'ATTS'),
    gsi1sk: at,
    [TTL_ATTRIBUTE]: expiry(attempt.timestamp),
  });
}

export interface MessageListing {
  organizationId?: string;
  endpointId?: string;
  eventTypes?: readonly string[];
  /** ms: only messages at or after it. */
  since?: number;
}

function messageFilter(listing: MessageListing): Listing['filter'] {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (listing.eventTypes !== undefined) {
    names['#type'] = 'type';
    parts.push(`#type IN (${listing.eventTypes.map((_, i) => `:type${i}`).join(', ')})`);
    listing.eventTypes.forEach((type, i) => (values[`:type${i}`] = type));
  }
  if (listing.since !== undefined) {
    names['#timestamp'] = 'timestamp';
    values[':since'] = listing.since;
    parts.push('#timestamp >= :since');
  }
  if (listing.endpointId !== undefined && listing.organizationId !== undefined) {
    names['#org'] = 'organizationId';
    values[':org'] = listing.organizationId;
    parts.push('#org = :org');
  }
  return parts.length === 0 ? undefined : { expression: parts.join(' AND '), names, values };
}

/**
 * One page of the tenant's messages, newest first: by endpoint (its deliveries' index), else by organization, else
 * all; the other conditions filter under the read budget (shared/db/query.ts). `after` is the position to go on
 * from. Returns the message ids of the page.
 */
export async function queryMessageIds(
  apiKeyId: string,
  listing: MessageListing,
  page: { size: number; after?: string },
): Promise<Page<string>> {
  const partition =
    listing.endpointId !== undefined
      ? { index: 'gsi1', partition: endpointPartition(apiKeyId, listing.endpointId, 'DLVS') }
      : listing.organizationId !== undefined
        ? { index: 'gsi2', partition: organizationMessages(apiKeyId, listing.organizationId) }
        : { index: 'gsi1', partition: tenantMessages(apiKeyId) };
  const found = await readPage({ ...partition, ascending: false, filter: messageFilter(listing) }, page);
  // Message items carry their `id`, delivery items their `messageId`.
  return {
    items: found.items.map((item) => String(item.messageId ?? item.id)),
    ...(found.after === undefined ? {} : { after: found.after }),
  };
}

/** The deliveries of `endpointId` that failed between `since` and `until` (ms, inclusive), oldest first. */
export async function failedDeliveries(
  apiKeyId: string,
  endpointId: string,
  since: number,
  until: number,
  page: { size: number; after?: string },
): Promise<Page<string>> {
  const found = await readPage(
    {
      index: 'gsi2',
      partition: endpointPartition(apiKeyId, endpointId, 'FAILED'),
      filter: {
        expression: '#timestamp BETWEEN :since AND :until',
        names: { '#timestamp': 'timestamp' },
        values: { ':since': since, ':until': until },
      },
    },
    { ...page, after: page.after ?? key(sortableNumber(Math.max(0, since - 1)), '~') },
  );
  return {
    items: found.items.map((item) => String(item.messageId)),
    ...(found.after === undefined ? {} : { after: found.after }),
  };
}

/** One page of attempts, newest first: of a message (optionally of one endpoint), or of an endpoint. */
export async function queryAttempts(
  apiKeyId: string,
  by: { messageId?: string; endpointId?: string },
  page: { size: number; after?: string },
): Promise<Page<StoredAttempt>> {
  const listing: Listing =
    by.messageId !== undefined
      ? {
          partition: messagePartition(apiKeyId, by.messageId),
          prefix: 'ATT#',
          ascending: false,
          consistent: true,
          ...(by.endpointId === undefined
            ? {}
            : { filter: { expression: 'endpointId = :endpointId', values: { ':endpointId': by.endpointId } } }),
        }
      : { index: 'gsi1', partition: endpointPartition(apiKeyId, by.endpointId ?? '', 'ATTS'), ascending: false };
  const found = await readPage(listing, page);
  return { items: found.items.map(toAttempt), ...(found.after === undefined ? {} : { after: found.after }) };
}

/** The CRDT debounce state of one editor (see shared/domain/webhooks/publish.ts). */
const debounceKey = (apiKeyId: string, editor: EditorOfDocument): ItemKey => ({
  pk: tenantKey(apiKeyId),
  sk: key('WHDEBOUNCE', segment(editor.organizationId), segment(editor.documentId), segment(editor.editorId)),
});

export interface EditorOfDocument {
  organizationId: string;
  documentId: string;
  editorId: string;
}

/**
 * Counts a change of the editor. True when no emission was scheduled (the caller schedules one); false when one
 * is, and it will see this change.
 */
export async function noteEditorChange(apiKeyId: string, editor: EditorOfDocument, now: number): Promise<boolean> {
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: debounceKey(apiKeyId, editor),
      UpdateExpression: 'ADD changes :one SET scheduled = :true, #ttl = :ttl',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':one': 1, ':true': true, ':ttl': expiry(now) },
      ReturnValues: 'ALL_OLD',
    }),
  );
  return Attributes?.scheduled !== true;
}

/** Changes counted so far (0 when none). */
export async function editorChanges(apiKeyId: string, editor: EditorOfDocument): Promise<number> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: debounceKey(apiKeyId, editor), ConsistentRead: true }),
  );
  return Number(Item?.changes ?? 0);
}

/**
 * Ends the scheduled emission when no change came after the `emitted` one: true then; false when one did (the
 * emission stays scheduled and the caller emits again).
 */
export async function finishEditorEmission(
  apiKeyId: string,
  editor: EditorOfDocument,
  emitted: number,
): Promise<boolean> {
  const written = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: debounceKey(apiKeyId, editor),
        UpdateExpression: 'SET scheduled = :false',
        ConditionExpression: 'attribute_not_exists(changes) OR changes <= :emitted',
        ExpressionAttributeValues: { ':false': false, ':emitted': emitted },
      }),
    ),
  );
  return written !== undefined;
}
