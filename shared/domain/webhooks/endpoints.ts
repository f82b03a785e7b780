/**
 * Advanced webhook endpoints (docs/decisions.md §11 "Endpoints"): where a tenant's events are delivered, each with
 * its own signing secret. Every operation needs advanced webhooks enabled (FailedPreconditionError otherwise).
 * An endpoint id that is malformed, unknown, or another API key's is NOT_FOUND alike, so ids of other tenants
 * cannot be probed.
 *
 * This module does not load the Encryption SDK: the handlers that encrypt or decrypt a secret pass
 * `encryptSecret` / `decryptSecret` in (shared/crypto/encryption.ts), so the functions that never touch a secret
 * (list, update, delete) are bundled without it and hold no KMS grant.
 */
import { AbortedError, InvalidArgumentError, NotFoundError } from '../../core/errors';
import { isTimeOrderedId, timeOrderedId } from '../../core/ids';
import type { DecryptSecret, EncryptionContext } from '../../crypto/encryption';
import { endpointSecretContext, generateWebhookSecret } from '../../crypto/webhook-secret';
import { transactWrite } from '../../db/transact';
import {
  ENDPOINT_NOT_FOUND,
  claimEndpointUidItem,
  countAnotherEndpointItem,
  countOneEndpointLessItem,
  deleteEndpointItem,
  getEndpoint,
  putEndpointItem,
  readEndpointPage,
  releaseEndpointUidItem,
  replaceEndpointSecret,
  updateEndpointFields,
  type EndpointSettings,
  type StoredEndpoint,
} from '../../db/webhook-endpoint';
import { requireWebhooksEnabled } from '../webhook-config';

export const ENDPOINT_ID_PREFIX = 'ep_';

/** How long a replaced secret keeps signing after a rotation (docs/decisions.md §11). */
export const PREVIOUS_SECRET_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Rotations planned again after another rotation of the same endpoint came first. */
const MAX_ROTATION_ATTEMPTS = 8;

export type EncryptSecret = (plaintext: string, context: EncryptionContext) => Promise<string>;

/** An endpoint as the API shows it: every field, null where not set; never its secret. */
export interface EndpointView extends EndpointSettings {
  id: string;
  uid: string | null;
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
}

/** What Create sends: `url` and any of the optional fields. */
export interface NewEndpoint {
  url: string;
  description?: string;
  filterTypes?: string[];
  channels?: string[];
  disabled?: boolean;
  rateLimit?: number;
  uid?: string;
  metadata?: Record<string, string>;
}

/** What Update sends: the endpoint and the fields to change; null clears an optional field. */
export interface EndpointUpdate extends Partial<EndpointSettings> {
  endpointId: string;
}

export interface EndpointList {
  /** In creation order. */
  endpoints: EndpointView[];
  /** The last endpoint's id: the next page starts after it. Null on an empty page. */
  iterator: string | null;
  /** `-` and the first endpoint's id: the previous page ends before it. Null on an empty page. */
  prevIterator: string | null;
  /** No more endpoints in the direction read. */
  done: boolean;
}

export interface EndpointSecret {
  endpointId: string;
  secret: string;
}

export const NO_ENDPOINT_FIELD = 'At least one endpoint field besides endpointId must be provided.';

export function presentEndpoint(stored: StoredEndpoint): EndpointView {
  return {
    id: stored.id,
    url: stored.url,
    description: stored.description,
    filterTypes: stored.filterTypes,
    channels: stored.channels,
    disabled: stored.disabled,
    rateLimit: stored.rateLimit,
    uid: stored.uid,
    metadata: stored.metadata,
    createdAt: new Date(stored.createdAt).toISOString(),
    updatedAt: new Date(stored.updatedAt).toISOString(),
  };
}

/**
 * The secrets an attempt to `endpoint` is signed with at `now`, in clear: the current one, then the one the last
 * rotation replaced while it has not expired. Throws what `decrypt` throws (a ciphertext of another tenant or
 * endpoint does not decrypt under this one's context).
 */
export async function signingSecrets(
  endpoint: StoredEndpoint,
  apiKeyId: string,
  decrypt: DecryptSecret,
  now: number,
): Promise<string[]> {
  const context = endpointSecretContext(apiKeyId, endpoint.id);
  const previous =
    endpoint.previousSecret !== undefined && endpoint.previousSecret.expiresAt > now
      ? [endpoint.previousSecret.ciphertext]
      : [];
  return Promise.all([endpoint.secret, ...previous].map((ciphertext) => decrypt(ciphertext, context)));
}

/** The tenant's endpoint `endpointId`; NotFoundError for a malformed or unknown id. */
async function existingEndpoint(apiKeyId: string, endpointId: string): Promise<StoredEndpoint> {
  const stored = isTimeOrderedId(ENDPOINT_ID_PREFIX, endpointId) ? await getEndpoint(apiKeyId, endpointId) : undefined;
  if (stored === undefined) throw new NotFoundError(ENDPOINT_NOT_FOUND);
  return stored;
}

/**
 * Creates an endpoint with a new signing secret (stored encrypted, never answered here). Throws
 * FailedPreconditionError (not enabled), AlreadyExistsError (`uid` taken in this API key), ResourceExhaustedError
 * (the key has MAX_ENDPOINTS_PER_KEY endpoints).
 */
export async function createEndpoint(
  apiKeyId: string,
  input: NewEndpoint,
  encrypt: EncryptSecret,
  now = Date.now(),
): Promise<EndpointView> {
  await requireWebhooksEnabled(apiKeyId);
  const id = timeOrderedId(ENDPOINT_ID_PREFIX, now);
  const secret = await encrypt(generateWebhookSecret(), endpointSecretContext(apiKeyId, id));
  const endpoint: StoredEndpoint = {
    id,
    url: input.url,
    description: input.description ?? null,
    filterTypes: input.filterTypes ?? null,
    channels: input.channels ?? null,
    disabled: input.disabled ?? false,
    rateLimit: input.rateLimit ?? null,
    uid: input.uid ?? null,
    metadata: input.metadata ?? null,
    createdAt: now,
    updatedAt: now,
    secret,
    version: 1,
  };
  await transactWrite([
    ...(endpoint.uid === null ? [] : [claimEndpointUidItem(apiKeyId, endpoint.uid, id)]),
    countAnotherEndpointItem(apiKeyId),
    putEndpointItem(apiKeyId, endpoint),
  ]);
  return presentEndpoint(endpoint);
}

/**
 * A page of the tenant's endpoints in creation order: from the first, after the endpoint `iterator` names, or,
 * for an iterator `-<id>`, the page before that endpoint. The iterator is only a position: its endpoint may have
 * been deleted since. Throws FailedPreconditionError (not enabled), InvalidArgumentError (a malformed iterator).
 */
export async function listEndpoints(
  apiKeyId: string,
  request: { limit: number; iterator?: string },
): Promise<EndpointList> {
  await requireWebhooksEnabled(apiKeyId);
  const backwards = request.iterator?.startsWith('-') === true;
  const from = backwards ? request.iterator?.slice(1) : request.iterator;
  if (from !== undefined && !isTimeOrderedId(ENDPOINT_ID_PREFIX, from)) {
    throw new InvalidArgumentError('Invalid iterator.', {
      details: { issues: [{ path: 'data.iterator', message: 'Must be an iterator or prevIterator of a page.' }] },
    });
  }
  const page = await readEndpointPage(apiKeyId, { limit: request.limit, from, backwards });
  const first = page.endpoints[0];
  const last = page.endpoints[page.endpoints.length - 1];
  return {
    endpoints: page.endpoints.map(presentEndpoint),
    iterator: last === undefined ? null : last.id,
    prevIterator: first === undefined ? null : `-${first.id}`,
    done: !page.more,
  };
}

/**
 * Changes the fields `update` sends, each on its own (concurrent updates of different fields all apply), and
 * answers the endpoint as stored after it. `disabled: false` also ends the endpoint's run of failures, so it is
 * not disabled again at once. Throws InvalidArgumentError (no field to change), FailedPreconditionError (not
 * enabled), NotFoundError.
 */
export async function updateEndpoint(
  apiKeyId: string,
  update: EndpointUpdate,
  now = Date.now(),
): Promise<EndpointView> {
  const { endpointId, ...fields } = update;
  if (Object.values(fields).every((value) => value === undefined)) {
    throw new InvalidArgumentError(NO_ENDPOINT_FIELD, {
      details: { issues: [{ path: 'data', message: NO_ENDPOINT_FIELD }] },
    });
  }
  await requireWebhooksEnabled(apiKeyId);
  const stored = isTimeOrderedId(ENDPOINT_ID_PREFIX, endpointId)
    ? await updateEndpointFields(
        apiKeyId,
        endpointId,
        { set: fields, clearFailingSince: fields.disabled === false },
        now,
      )
    : undefined;
  if (stored === undefined) throw new NotFoundError(ENDPOINT_NOT_FOUND);
  return presentEndpoint(stored);
}

/**
 * Deletes the endpoint with its uid claim, and counts it out, in one transaction. Throws FailedPreconditionError
 * (not enabled), NotFoundError (also when a concurrent delete came first).
 */
export async function deleteEndpoint(
  apiKeyId: string,
  endpointId: string,
): Promise<{ endpointId: string; deleted: true }> {
  await requireWebhooksEnabled(apiKeyId);
  const stored = await existingEndpoint(apiKeyId, endpointId);
  await transactWrite([
    deleteEndpointItem(apiKeyId, endpointId),
    ...(stored.uid === null ? [] : [releaseEndpointUidItem(apiKeyId, stored.uid)]),
    countOneEndpointLessItem(apiKeyId),
  ]);
  return { endpointId, deleted: true };
}

/** The endpoint's current signing secret, in clear. Throws FailedPreconditionError (not enabled), NotFoundError. */
export async function readEndpointSecret(
  apiKeyId: string,
  endpointId: string,
  decrypt: DecryptSecret,
): Promise<EndpointSecret> {
  await requireWebhooksEnabled(apiKeyId);
  const stored = await existingEndpoint(apiKeyId, endpointId);
  return { endpointId, secret: await decrypt(stored.secret, endpointSecretContext(apiKeyId, endpointId)) };
}

/**
 * Gives the endpoint a new signing secret and answers it. The secret it replaces keeps signing for
 * PREVIOUS_SECRET_LIFETIME_MS (one previous secret: a second rotation within that time drops the older one). A
 * rotation that another rotation overtook is applied again on top of it, so neither caller's secret is lost
 * without a trace: the first becomes the previous one. Throws FailedPreconditionError (not enabled), NotFoundError,
 * AbortedError (rotations of the endpoint kept overtaking this one).
 */
export async function rotateEndpointSecret(
  apiKeyId: string,
  endpointId: string,
  encrypt: EncryptSecret,
  now = Date.now(),
): Promise<EndpointSecret> {
  await requireWebhooksEnabled(apiKeyId);
  let stored = await existingEndpoint(apiKeyId, endpointId);
  const secret = generateWebhookSecret();
  const next = await encrypt(secret, endpointSecretContext(apiKeyId, endpointId));
  for (let attempt = 1; attempt <= MAX_ROTATION_ATTEMPTS; attempt += 1) {
    const rotation = { replaced: stored.secret, next, previousExpiresAt: now + PREVIOUS_SECRET_LIFETIME_MS, now };
    if (await replaceEndpointSecret(apiKeyId, endpointId, rotation)) return { endpointId, secret };
    stored = await existingEndpoint(apiKeyId, endpointId);
  }
  throw new AbortedError('The endpoint secret was rotated by concurrent requests; retry.');
}
