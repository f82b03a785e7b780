/**
 * Change data capture (docs/design.md "Work after the response", docs/decisions.md §11 "Events"): what a change of
 * the table, as the stream decoder names it (shared/db/item-change.ts: the kind of item, before and after), means for
 * webhooks. The events consumer is handed only the kinds below (its interests in shared/workers.ts); this module
 * decides from the images which writes of them are events:
 *
 * - an activity record: written new, or rewritten by Add Activities (a new server timestamp); a record moved to
 *   another document by a migration keeps its timestamp and is no event;
 * - a notification: created (an update or a re-add is a MODIFY, and no event);
 * - a recording: created, or re-added (a new updatedAt; a migration keeps it);
 * - a CRDT head or delta: an editor changed; debounced (shared/domain/webhooks/publish.ts);
 * - a version's summary: written (`crdt.version_created`, every kind), or marked restored once the restore's edit
 *   is stored (`crdt.version_restored`); one moved by a migration is neither;
 * - a document migration item reaching `completed` or `failed`.
 *
 * Each event's message id is derived from its source item and the version the image shows, so a stream record
 * seen twice makes one message.
 */
import { derivedId } from '../../core/ids';
import { toActivity } from '../../db/activity';
import type { ItemChange } from '../../db/item-change';
import { migrationFromItem } from '../../db/migration';
import { toNotification } from '../../db/notification';
import { toRecording } from '../../db/recording';
import type { EditorOfDocument } from '../../db/webhook-message';
import { contentHash, presentActivity } from '../activities';
import { presentNotification } from '../notifications';
import { presentRecording } from '../recordings';

export const MESSAGE_ID_PREFIX = 'msg_';

/** An event about to become a message. */
export interface WebhookEvent {
  /** The message id (`msg_…`), derived from the cause. */
  id: string;
  /** `<group>.<action>`. */
  type: string;
  /** When the event happened, ms since the epoch. */
  timestamp: number;
  organizationId: string;
  documentId?: string;
  data: unknown;
}

export type Change =
  | { kind: 'event'; apiKeyId: string; event: WebhookEvent }
  | { kind: 'editor'; apiKeyId: string; editor: EditorOfDocument };

const MIGRATION_END = new Set(['completed', 'failed']);

/** What the change means for webhooks, or undefined when it is no event. */
export function changeOf(record: ItemChange): Change | undefined {
  const item = record.newImage;
  if (item === undefined || record.eventName === 'REMOVE') return undefined;
  const pk = String(item.pk);
  const sk = String(item.sk);
  const apiKeyId = record.apiKeyId;
  if (apiKeyId === undefined) return undefined;
  const old = record.oldImage;
  const event = (type: string, parts: readonly unknown[], fields: Omit<WebhookEvent, 'id' | 'type'>): Change => ({
    kind: 'event',
    apiKeyId,
    event: { id: derivedId(MESSAGE_ID_PREFIX, apiKeyId, pk, sk, ...parts.map(String)), type, ...fields },
  });

  if (record.kind === 'activity') {
    if (old !== undefined && old.timestamp === item.timestamp) return undefined;
    const activity = toActivity(item);
    return event(
      activity.content.actionType,
      [activity.timestamp, contentHash(activity.documentId, activity.content)],
      {
        timestamp: activity.timestamp,
        organizationId: activity.organizationId,
        ...(activity.documentId === undefined ? {} : { documentId: activity.documentId }),
        data: presentActivity(apiKeyId, activity),
      },
    );
  }
  if (record.kind === 'notification') {
    if (record.eventName !== 'INSERT') return undefined;
    const notification = toNotification(item);
    return event('notification.add', [notification.timestamp], {
      timestamp: notification.timestamp,
      organizationId: notification.organizationId,
      documentId: notification.documentId,
      data: presentNotification(apiKeyId, notification),
    });
  }
  if (record.kind === 'recording') {
    if (old !== undefined && old.updatedAt === item.updatedAt) return undefined;
    const recording = toRecording(item);
    return event('recorder.done', [recording.updatedAt], {
      timestamp: Number(recording.updatedAt),
      organizationId: recording.organizationId,
      documentId: recording.documentId,
      data: presentRecording(apiKeyId, recording),
    });
  }
  if (record.kind === 'crdtHead' && typeof item.editorId === 'string' && typeof item.organizationId === 'string') {
    if (old !== undefined && old.lastUpdate === item.lastUpdate && old.version === item.version) return undefined;
    // A compaction only folds deltas that were events already (shared/db/crdt.ts compactEditor).
    if (item.compaction === true) return undefined;
    return {
      kind: 'editor',
      apiKeyId,
      editor: {
        organizationId: String(item.organizationId),
        documentId: String(item.documentId),
        editorId: item.editorId,
      },
    };
  }
  if (record.kind === 'crdtVersion' && typeof item.versionId === 'string' && item.migrated !== true) {
    const version = {
      organizationId: String(item.organizationId),
      documentId: String(item.documentId),
      editorId: String(item.editorId),
      versionId: item.versionId,
      kind: String(item.kind),
      ...(typeof item.name === 'string' ? { name: item.name } : {}),
      authors: Array.isArray(item.authors) ? item.authors.map(String) : [],
      createdAt: Number(item.createdAt),
    };
    const located = { organizationId: version.organizationId, documentId: version.documentId };
    if (record.eventName === 'INSERT')
      return event('crdt.version_created', ['created'], { timestamp: version.createdAt, ...located, data: version });
    if (typeof item.restoredVersionId === 'string' && old?.restoredVersionId === undefined)
      return event('crdt.version_restored', ['restored'], {
        timestamp: version.createdAt,
        ...located,
        data: { ...version, restoredVersionId: item.restoredVersionId },
      });
    return undefined;
  }
  const migration = record.kind === 'migration' ? migrationFromItem(item) : undefined;
  if (
    migration !== undefined &&
    MIGRATION_END.has(migration.status) &&
    migrationFromItem(old)?.status !== migration.status
  ) {
    const type = migration.status === 'completed' ? 'document.migration_completed' : 'document.migration_failed';
    return event(type, [migration.status], {
      timestamp: migration.updatedAt,
      organizationId: migration.organizationId,
      documentId: migration.documentId,
      data: {
        organizationId: migration.organizationId,
        documentId: migration.documentId,
        newDocumentId: migration.newDocumentId,
        migrationId: migration.migrationId,
        status: migration.status,
        ...(migration.error === undefined ? {} : { error: migration.error }),
      },
    });
  }
  return undefined;
}

/**
 * The `data` of a `crdt.update_data` event (docs/decisions.md §11): the editor as Get CRDT Data returns it, with the
 * organization and document it belongs to (the record alone names only the editor); its plain `data` left out, with
 * `truncated: true`, when `tooLarge`.
 */
export function editorEventData(
  editor: EditorOfDocument,
  record: { data?: unknown } & Record<string, unknown>,
  tooLarge: boolean,
): Record<string, unknown> {
  const located = { organizationId: editor.organizationId, documentId: editor.documentId };
  if (!tooLarge) return { ...record, ...located };
  const { data: _data, ...rest } = record;
  return { ...rest, ...located, truncated: true };
}

/** Whether an endpoint subscribed to what a message is about (docs/decisions.md §11). */
export function endpointWants(
  endpoint: { disabled: boolean; filterTypes: readonly string[] | null; channels: readonly string[] | null },
  event: { type: string; organizationId: string },
): boolean {
  return (
    !endpoint.disabled &&
    (endpoint.filterTypes === null || endpoint.filterTypes.includes(event.type)) &&
    (endpoint.channels === null || endpoint.channels.includes(event.organizationId))
  );
}
