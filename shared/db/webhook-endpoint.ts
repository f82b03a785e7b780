/**
 * The advanced webhook endpoints of a tenant (docs/decisions.md §11), in the tenant's own partition:
 *
 *   pk T#<apiKeyId>   sk WHEP#<endpointId>       an endpoint: id, url, description, filterTypes, channels, disabled,
 *                                                rateLimit, uid, metadata (JSON string), createdAt, updatedAt (ms),
 *                                                secret (Encryption SDK ciphertext), previousSecret?
 *                                                {ciphertext, expiresAt}, failingSince? (ms), version
 *   pk T#<apiKeyId>   sk WHEP_COUNT              count: the tenant's endpoints (at most MAX_ENDPOINTS_PER_KEY)
 *   pk T#<apiKeyId>   sk WHEP_UID#<uid>          endpointId: claims a caller-assigned uid for one endpoint
 *
 * Endpoint ids are time-ordered (`ep_…`, shared/core/ids.ts), so the sort keys list the endpoints in creation
 * order, and `begins_with(sk, 'WHEP#')` reads them without the count or uid items (`_` is not `#`). Creating an
 * endpoint puts it, counts it and claims its uid in one transaction; deleting it removes all three in one; so the
 * count and the uids never disagree with the endpoints. Optional fields the caller never set are stored as null,
 * as the API shows them; `failingSince` and `previousSecret` are absent when they do not apply.
 */
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError, NotFoundError, ResourceExhaustedError } from '../core/errors';
import type { Item, ItemKey } from './batch';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { fromJsonAttribute, toJsonAttribute } from './json-attribute';
import { key, prefix, segment, tenantKey } from './keys';
import { queryAll, readPage } from './query';
import { named, type TransactItem } from './transact';

/** At most this many endpoints per API key (docs/decisions.md §11). */
export const MAX_ENDPOINTS_PER_KEY = 50;

export const ENDPOINT_NOT_FOUND = 'Endpoint not found.';

/** An endpoint that has had only failures this long is disabled (docs/decisions.md §11 "Delivery"). */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 60 * 60 * 1000;

/** The fields of an endpoint a caller sets (create) and changes (update); null: not set. */
export interface EndpointSettings {
  url: string;
  description: string | null;
  filterTypes: string[] | null;
  channels: string[] | null;
  disabled: boolean;
  rateLimit: number | null;
  metadata: Record<string, string> | null;
}

/** An endpoint as stored. */
export interface StoredEndpoint extends EndpointSettings {
  id: string;
  uid: string | null;
  /** Milliseconds. */
  createdAt: number;
  updatedAt: number;
  /** The signing secret (`whsec_…`) as an Encryption SDK message, base64, under endpointSecretContext. */
  secret: string;
  /** The secret the last rotation replaced, which still signs until `expiresAt` (ms). */
  previousSecret?: { ciphertext: string; expiresAt: number };
  /** When the endpoint's current run of failed attempts began (ms); absent after a success. */
  failingSince?: number;
  /** Writes of the endpoint's fields so far: 1 after the create. */
  version: number;
}

const ENDPOINT_TAG = 'WHEP';

const partitionOf = (apiKeyId: string) => tenantKey(apiKeyId);

export const endpointKey = (apiKeyId: string, endpointId: string): ItemKey => ({
  pk: partitionOf(apiKeyId),
  sk: key(ENDPOINT_TAG, segment(endpointId)),
});
const countKey = (apiKeyId: string): ItemKey => ({ pk: partitionOf(apiKeyId), sk: 'WHEP_COUNT' });
const uidKey = (apiKeyId: string, uid: string): ItemKey => ({
  pk: partitionOf(apiKeyId),
  sk: key('WHEP_UID', segment(uid)),
});
const ENDPOINTS_PREFIX = prefix(ENDPOINT_TAG);

export function toEndpoint(item: Item): StoredEndpoint {
  const previous = item.previousSecret as { ciphertext: string; expiresAt: number } | undefined;
  return {
    id: String(item.id),
    url: String(item.url),
    description: (item.description as string | null | undefined) ?? null,
    filterTypes: (item.filterTypes as string[] | null | undefined) ?? null,
    channels: (item.channels as string[] | null | undefined) ?? null,
    disabled: item.disabled === true,
    rateLimit: (item.rateLimit as number | null | undefined) ?? null,
    uid: (item.uid as string | null | undefined) ?? null,
    // Stored as a JSON string (shared/db/json-attribute.ts): metadata keys are the client's, `__proto__` included.
    metadata: item.metadata === null ? null : (fromJsonAttribute<Record<string, string>>(item.metadata) ?? null),
    createdAt: Number(item.createdAt),
    updatedAt: Number(item.updatedAt),
    secret: String(item.secret),
    ...(previous === undefined
      ? {}
      : { previousSecret: { ciphertext: String(previous.ciphertext), expiresAt: Number(previous.expiresAt) } }),
    ...(item.failingSince === undefined ? {} : { failingSince: Number(item.failingSince) }),
    version: Number(item.version ?? 1),
  };
}

/** The stored value of a field: metadata as JSON text, anything else as it is (null included). */
function attributeValue<F extends keyof EndpointSettings>(field: F, value: EndpointSettings[F]): unknown {
  return field === 'metadata' && value !== null ? toJsonAttribute(value) : value;
}

/** Puts a new endpoint (its id is fresh, so it overwrites nothing). */
export function putEndpointItem(apiKeyId: string, endpoint: StoredEndpoint): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: {
        ...endpointKey(apiKeyId, endpoint.id),
        ...endpoint,
        metadata: attributeValue('metadata', endpoint.metadata),
      },
    },
  };
}

/**
 * Counts one more endpoint; fails its condition (RESOURCE_EXHAUSTED) at the limit, without Retry-After: waiting does
 * not lift it, deleting an endpoint does.
 */
export function countAnotherEndpointItem(apiKeyId: string): TransactItem {
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: countKey(apiKeyId),
        UpdateExpression: 'ADD #count :one',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':one': 1, ':max': MAX_ENDPOINTS_PER_KEY },
      },
    },
    () =>
      new ResourceExhaustedError(
        `An API key may have at most ${MAX_ENDPOINTS_PER_KEY} advanced webhook endpoints; delete one to create another.`,
      ),
  );
}

/** Counts one endpoint less (in the transaction that deletes it). */
export function countOneEndpointLessItem(apiKeyId: string): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: countKey(apiKeyId),
      UpdateExpression: 'ADD #count :minusOne',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':minusOne': -1 },
    },
  };
}

/** Claims `uid` for the endpoint; fails its condition (ALREADY_EXISTS) when another endpoint of the key holds it. */
export function claimEndpointUidItem(apiKeyId: string, uid: string, endpointId: string): TransactItem {
  return named(
    {
      Put: {
        TableName: TABLE_NAME,
        Item: { ...uidKey(apiKeyId, uid), uid, endpointId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    () => new AlreadyExistsError('An endpoint with this uid already exists.'),
  );
}

/** Releases `uid` (in the transaction that deletes its endpoint). */
export function releaseEndpointUidItem(apiKeyId: string, uid: string): TransactItem {
  return { Delete: { TableName: TABLE_NAME, Key: uidKey(apiKeyId, uid) } };
}

/** Deletes the endpoint; fails its condition (NOT_FOUND) when it is gone already. */
export function deleteEndpointItem(apiKeyId: string, endpointId: string): TransactItem {
  return named(
    {
      Delete: {
        TableName: TABLE_NAME,
        Key: endpointKey(apiKeyId, endpointId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    () => new NotFoundError(ENDPOINT_NOT_FOUND),
  );
}

/** The endpoint, or undefined when the tenant has none with this id (strongly consistent). */
export async function getEndpoint(apiKeyId: string, endpointId: string): Promise<StoredEndpoint | undefined> {
  const { Item: item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: endpointKey(apiKeyId, endpointId), ConsistentRead: true }),
  );
  return item === undefined ? undefined : toEndpoint(item);
}

/**
 * Every endpoint of the tenant, in creation order: for the events and delivery workers, which match each event
 * against all of them. At most MAX_ENDPOINTS_PER_KEY by design; strongly consistent, so an endpoint created just
 * before an event receives it.
 */
export async function listAllEndpoints(apiKeyId: string): Promise<StoredEndpoint[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': partitionOf(apiKeyId), ':prefix': ENDPOINTS_PREFIX },
    ConsistentRead: true,
  });
  return items.map(toEndpoint);
}

export interface EndpointPage {
  /** In creation order, whichever the direction read. */
  endpoints: StoredEndpoint[];
  /** Whether more endpoints follow in the direction read (after the page forwards, before it backwards). */
  more: boolean;
}

/**
 * Up to `limit` endpoints in creation order after the endpoint `from` (forwards), or before it (backwards, the
 * page nearest to it); from the first endpoint without `from`. `from` is only a position: it need not exist.
 */
export async function readEndpointPage(
  apiKeyId: string,
  page: { limit: number; from?: string; backwards?: boolean },
): Promise<EndpointPage> {
  const backwards = page.backwards === true && page.from !== undefined;
  const read = await readPage(
    { partition: partitionOf(apiKeyId), prefix: ENDPOINTS_PREFIX, ascending: !backwards, consistent: true },
    { size: page.limit, after: page.from === undefined ? undefined : endpointKey(apiKeyId, page.from).sk },
  );
  const endpoints = read.items.map(toEndpoint);
  return { endpoints: backwards ? endpoints.reverse() : endpoints, more: read.after !== undefined };
}

/** What an update does: fields to set (null clears an optional one), and whether it ends a run of failures. */
export interface EndpointChange {
  set: Partial<EndpointSettings>;
  clearFailingSince: boolean;
}

/**
 * Sets the given fields of an existing endpoint, each its own path, so that concurrent updates of different
 * fields all apply (of the same field, the last writer wins); bumps `version` and `updatedAt`. Returns the
 * endpoint as stored after the write, or undefined when there is no such endpoint (nothing is written).
 */
export async function updateEndpointFields(
  apiKeyId: string,
  endpointId: string,
  change: EndpointChange,
  now: number,
): Promise<StoredEndpoint | undefined> {
  const names: Record<string, string> = { '#updatedAt': 'updatedAt', '#version': 'version' };
  const values: Record<string, unknown> = { ':now': now, ':one': 1 };
  const sets = ['#updatedAt = :now'];
  for (const [field, value] of Object.entries(change.set) as Array<
    [keyof EndpointSettings, EndpointSettings[keyof EndpointSettings]]
  >) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = attributeValue(field, value);
    sets.push(`#${field} = :${field}`);
  }
  let expression = `SET ${sets.join(', ')} ADD #version :one`;
  if (change.clearFailingSince) {
    names['#failingSince'] = 'failingSince';
    expression += ' REMOVE #failingSince';
  }
  const updated = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: endpointKey(apiKeyId, endpointId),
        UpdateExpression: expression,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    ),
  );
  const item = updated?.Attributes;
  return item === undefined ? undefined : toEndpoint(item);
}

/**
 * Replaces the endpoint's secret by `next` and keeps the one it replaces as `previousSecret` until
 * `previousExpiresAt`, provided the stored secret is still `replaced` (another rotation did not come first).
 * Returns false when that condition failed or the endpoint is gone (nothing is written).
 */
export async function replaceEndpointSecret(
  apiKeyId: string,
  endpointId: string,
  rotation: { replaced: string; next: string; previousExpiresAt: number; now: number },
): Promise<boolean> {
  const written = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: endpointKey(apiKeyId, endpointId),
        UpdateExpression: 'SET #secret = :next, #previousSecret = :previous, #updatedAt = :now ADD #version :one',
        ConditionExpression: 'attribute_exists(pk) AND #secret = :replaced',
        ExpressionAttributeNames: {
          '#secret': 'secret',
          '#previousSecret': 'previousSecret',
          '#updatedAt': 'updatedAt',
          '#version': 'version',
        },
        ExpressionAttributeValues: {
          ':next': rotation.next,
          ':replaced': rotation.replaced,
          ':previous': { ciphertext: rotation.replaced, expiresAt: rotation.previousExpiresAt },
          ':now': rotation.now,
          ':one': 1,
        },
      }),
    ),
  );
  return written !== undefined;
}

/** Runs an UpdateItem whose condition includes that the endpoint exists; a deleted endpoint is not recreated. */
async function updateIfPresent(input: UpdateCommandInput): Promise<Item | undefined> {
  return (await unlessConditionFails(db.send(new UpdateCommand(input))))?.Attributes;
}

/**
 * Records how an attempt to the endpoint ended (docs/decisions.md §11 "Delivery"): a success ends its run of
 * failures (removes `failingSince`); a failure starts one (`failingSince` = now, unless a run is under way), and
 * disables the endpoint once the run is DISABLE_AFTER_FAILING_MS old. Does nothing for an endpoint that was
 * deleted meanwhile. The disabling write holds only while the run it saw is still the stored one, so a success
 * recorded in between keeps the endpoint enabled.
 */
export async function recordEndpointOutcome(
  apiKeyId: string,
  endpointId: string,
  outcome: 'success' | 'failure',
  now: number,
): Promise<void> {
  const Key = endpointKey(apiKeyId, endpointId);
  if (outcome === 'success') {
    // Only while a run is recorded: most successes then change nothing and cost no stream record.
    await updateIfPresent({
      TableName: TABLE_NAME,
      Key,
      UpdateExpression: 'REMOVE #failingSince',
      ConditionExpression: 'attribute_exists(pk) AND attribute_exists(#failingSince)',
      ExpressionAttributeNames: { '#failingSince': 'failingSince' },
    });
    return;
  }
  const started = await updateIfPresent({
    TableName: TABLE_NAME,
    Key,
    UpdateExpression: 'SET #failingSince = if_not_exists(#failingSince, :now)',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#failingSince': 'failingSince' },
    ExpressionAttributeValues: { ':now': now },
    ReturnValues: 'ALL_NEW',
  });
  if (started === undefined || started.disabled === true) return;
  const failingSince = Number(started.failingSince);
  if (failingSince > now - DISABLE_AFTER_FAILING_MS) return;
  await updateIfPresent({
    TableName: TABLE_NAME,
    Key,
    UpdateExpression: 'SET #disabled = :true, #updatedAt = :now ADD #version :one',
    ConditionExpression: 'attribute_exists(pk) AND #failingSince = :failingSince',
    ExpressionAttributeNames: {
      '#disabled': 'disabled',
      '#failingSince': 'failingSince',
      '#updatedAt': 'updatedAt',
      '#version': 'version',
    },
    ExpressionAttributeValues: { ':true': true, ':now': now, ':failingSince': failingSince, ':one': 1 },
  });
}
