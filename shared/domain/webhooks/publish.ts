/**
 * Events becoming messages (docs/decisions.md §11): for a tenant with advanced webhooks enabled, one message item
 * per event with a pending delivery per endpoint that wants it, and one queued job per delivery. A tenant without
 * them gets nothing written at all. The message id is derived from the cause, so publishing an event twice (a
 * stream record seen again, a worker retried) writes one message; the second run re-queues the deliveries that
 * have not been attempted yet, in case the first stopped before queueing them.
 *
 * `crdt.update_data` is debounced per editor: the first change emits at once, then the editor is looked at again
 * every 5 s while it keeps changing, each time emitting its newest state if it changed: at most one message per
 * editor per 5 s, and the last one always carries the final state.
 */
import { forEachLimited } from '../../core/concurrency';
import { memoizedByKey } from '../../core/memo';
import { config } from '../../core/config';
import { derivedId } from '../../core/ids';
import type { JobQueue } from '../../adapters/queue/queue';
import { listAllEndpoints, type StoredEndpoint } from '../../db/webhook-endpoint';
import {
  createMessages,
  createMissingDeliveries,
  editorChanges,
  finishEditorEmission,
  getDeliveries,
  getMessage,
  newDelivery,
  noteEditorChange,
  type EditorOfDocument,
  type StoredMessage,
  type TenantMessage,
} from '../../db/webhook-message';
import { readEditorRecord } from '../crdt/reads';
import { readWebhookConfig, type WebhookConfigView } from '../webhook-config';
import { editorEventData, endpointWants, MESSAGE_ID_PREFIX, type Change, type WebhookEvent } from './events';
import { enqueue, type DeliveryJob } from '../delivery/jobs';
import { webhookBody } from './payload';

/** The CRDT debounce window (docs/decisions.md §11), compressed with the retry schedule in tests. */
export const EDITOR_DEBOUNCE_MS = 5_000;
/** A CRDT event's plain `data` larger than this is left out (`truncated: true`). */
export const MAX_CRDT_DATA_BYTES = 200 * 1024;

/** What publishing reads of a tenant, once per batch of changes: its configuration when webhooks are on, its endpoints. */
export interface TenantReader {
  config(apiKeyId: string): Promise<WebhookConfigView | undefined>;
  endpoints(apiKeyId: string): Promise<StoredEndpoint[]>;
}

/** A reader for one batch: each tenant's configuration and endpoints are read once, however many of its changes. */
export function tenantReader(): TenantReader {
  return {
    config: memoizedByKey(async (apiKeyId) => {
      const view = await readWebhookConfig(apiKeyId);
      return view.isEnabled ? view : undefined;
    }),
    endpoints: memoizedByKey(listAllEndpoints),
  };
}

/** An event ready to publish: its tenant's configuration (webhooks on) and endpoints. */
export interface Publication {
  apiKeyId: string;
  event: WebhookEvent;
  webhookConfig: WebhookConfigView;
  endpoints: readonly StoredEndpoint[];
  /** An endpoint not to deliver to (the one a `message.attempt.exhausted` is about). */
  except?: string;
}

/**
 * The message's body, or why none can be made: a key stored before keys were probed may fail to encrypt
 * (shared/domain/webhook-config.ts). Such an event still becomes a message, without its data, whose every
 * attempt fails with the reason recorded (delivery.ts), so the tenant sees it in messages/get and attempts/get,
 * and the tenant's failure stays the tenant's: no other event of the batch waits for it.
 */
function bodyOf(event: WebhookEvent, webhookConfig: WebhookConfigView): { payload: string; undeliverable?: string } {
  try {
    return { payload: webhookBody({ type: event.type, timestamp: event.timestamp, data: event.data }, webhookConfig) };
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    const undeliverable = webhookConfig.encryptData
      ? `The data could not be encrypted under the advanced webhook configuration's publicKey (RSA-OAEP, SHA-256: ${cause}). Store a working key with /v2/workspace/advancedwebhookconfig/update; this message is not delivered.`
      : `The payload could not be made (${cause}); this message is not delivered.`;
    return {
      payload: JSON.stringify({ type: event.type, timestamp: new Date(event.timestamp).toISOString() }),
      undeliverable,
    };
  }
}

function messageOf({ event, webhookConfig, endpoints, except }: Publication): StoredMessage {
  return {
    id: event.id,
    type: event.type,
    timestamp: event.timestamp,
    organizationId: event.organizationId,
    ...(event.documentId === undefined ? {} : { documentId: event.documentId }),
    ...bodyOf(event, webhookConfig),
    endpointIds: endpoints
      .filter((endpoint) => endpoint.id !== except && endpointWants(endpoint, event))
      .map((endpoint) => endpoint.id),
  };
}

const firstAttempt = (apiKeyId: string, messageId: string, endpointId: string, now: number): DeliveryJob => ({
  kind: 'deliver',
  apiKeyId,
  messageId,
  endpointId,
  attempt: 1,
  dueAt: now,
});

/**
 * A message published before (its cause seen again): its missing deliveries are written, and the deliveries not
 * attempted yet are queued again, in case the first run stopped before queueing them.
 */
async function resume({ apiKeyId, message }: TenantMessage, now: number): Promise<DeliveryJob[]> {
  const stored = await getMessage(apiKeyId, message.id);
  if (stored === undefined) return [];
  await createMissingDeliveries(
    apiKeyId,
    stored.endpointIds.map((endpointId) => newDelivery(stored, endpointId, now)),
  );
  const deliveries = (await getDeliveries(apiKeyId, [stored])).get(stored.id) ?? [];
  return deliveries
    .filter((delivery) => delivery.status === 'pending' && delivery.attempts === 0)
    .map((delivery) => firstAttempt(apiKeyId, stored.id, delivery.endpointId, now));
}

/**
 * Writes the events' messages with their deliveries (batched across events and tenants: shared/db/webhook-message.ts
 * `createMessages`) and queues the first attempt of each delivery.
 */
export async function publishEvents(
  publications: readonly Publication[],
  queue: JobQueue,
  now = Date.now(),
): Promise<void> {
  const messages = publications.map((publication): TenantMessage => ({
    apiKeyId: publication.apiKeyId,
    message: messageOf(publication),
  }));
  const existing = await createMessages(messages);
  const jobs = messages
    .filter((entry) => !existing.includes(entry))
    .flatMap(({ apiKeyId, message }) =>
      message.endpointIds.map((endpointId) => firstAttempt(apiKeyId, message.id, endpointId, now)),
    );
  const resumed = await Promise.all(existing.map((entry) => resume(entry, now)));
  await enqueue(queue, [...jobs, ...resumed.flat()], now);
}

/** Publishes one event of a tenant whose webhooks are on (`publishEvents` with one). */
export async function publishEvent(
  apiKeyId: string,
  event: WebhookEvent,
  queue: JobQueue,
  webhookConfig: WebhookConfigView,
  options: { except?: string; now?: number; endpoints?: readonly StoredEndpoint[] } = {},
): Promise<void> {
  const endpoints = options.endpoints ?? (await listAllEndpoints(apiKeyId));
  await publishEvents(
    [
      {
        apiKeyId,
        event,
        webhookConfig,
        endpoints,
        ...(options.except === undefined ? {} : { except: options.except }),
      },
    ],
    queue,
    options.now,
  );
}

/** Changes of one batch read at once (each tenant's configuration and endpoints are read once anyway). */
const CHANGE_CONCURRENCY = 16;

/**
 * Handles what the events worker saw in one batch: the events of tenants with webhooks on published together
 * (`publishEvents`), editor changes counted and their emission scheduled. Returns the changes that could not be
 * handled, with why; the worker reports their records back to the stream. Publishing is one step for the whole
 * batch; when it fails, each event is published again alone, so only the events that fail on their own are
 * reported. An event whose body cannot be made (a tenant's unusable key) does not fail: see `bodyOf`.
 */
export async function handleChanges(
  changes: readonly Change[],
  queue: JobQueue,
  tenant: TenantReader,
  now = Date.now(),
): Promise<Map<Change, unknown>> {
  const failed = new Map<Change, unknown>();
  const publications = new Map<Change, Publication>();
  await forEachLimited(changes, CHANGE_CONCURRENCY, async (change) => {
    try {
      const webhookConfig = await tenant.config(change.apiKeyId);
      if (webhookConfig === undefined) return;
      if (change.kind === 'event') {
        publications.set(change, {
          apiKeyId: change.apiKeyId,
          event: change.event,
          webhookConfig,
          endpoints: await tenant.endpoints(change.apiKeyId),
        });
      } else if (await noteEditorChange(change.apiKeyId, change.editor, now)) {
        await enqueue(queue, [{ kind: 'editor', apiKeyId: change.apiKeyId, ...change.editor, dueAt: now }], now);
      }
    } catch (error) {
      failed.set(change, error);
    }
  });
  try {
    await publishEvents([...publications.values()], queue, now);
  } catch {
    // One bad event (an item DynamoDB refuses) must not fail its neighbours: each is published again on its own,
    // and only the ones that fail alone are reported (publishing twice is harmless: ids are derived).
    await forEachLimited([...publications], CHANGE_CONCURRENCY, async ([change, publication]) => {
      try {
        await publishEvents([publication], queue, now);
      } catch (error) {
        failed.set(change, error);
      }
    });
  }
  return failed;
}

const debounceMs = () => EDITOR_DEBOUNCE_MS / config.webhookScheduleDivisor;

/**
 * One look at a changing editor (an `editor` job): emits its newest state when it changed since the last
 * emission, then looks again after the debounce window; ends the emission once nothing changed in a window.
 */
export async function emitEditor(
  job: Extract<DeliveryJob, { kind: 'editor' }>,
  queue: JobQueue,
  now = Date.now(),
): Promise<void> {
  const editor: EditorOfDocument = {
    organizationId: job.organizationId,
    documentId: job.documentId,
    editorId: job.editorId,
  };
  const changes = await editorChanges(job.apiKeyId, editor);
  if (job.emitted !== undefined && changes <= job.emitted) {
    if (await finishEditorEmission(job.apiKeyId, editor, job.emitted)) return;
    // A change arrived since the count was read: look again now.
    await enqueue(queue, [{ ...job, dueAt: now }], now);
    return;
  }
  const webhookConfig = await readWebhookConfig(job.apiKeyId);
  const record = webhookConfig.isEnabled ? await readEditorRecord(job.apiKeyId, editor) : undefined;
  if (webhookConfig.isEnabled && record !== undefined) {
    const tooLarge = Buffer.byteLength(JSON.stringify(record.data ?? null)) > MAX_CRDT_DATA_BYTES;
    const event: WebhookEvent = {
      id: derivedId(
        MESSAGE_ID_PREFIX,
        job.apiKeyId,
        'crdt',
        job.organizationId,
        job.documentId,
        job.editorId,
        String(changes),
      ),
      type: 'crdt.update_data',
      timestamp: now,
      organizationId: job.organizationId,
      documentId: job.documentId,
      data: editorEventData(editor, { ...record }, tooLarge),
    };
    await publishEvent(job.apiKeyId, event, queue, webhookConfig, { now });
  }
  await enqueue(queue, [{ ...job, emitted: changes, dueAt: now + debounceMs() }], now);
}
