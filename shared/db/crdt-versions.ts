/**
 * Versions of an editor (decisions §14): a small summary item per version, and the version's Yjs state in parts of
 * its own, in the document's CRDT partition (D, see shared/db/crdt.ts) beside the editor:
 *
 *   pk D   sk V#<editor>#S#<versionId>           summary: versionId, editorId, organizationId, documentId, kind, name,
 *                                                createdAt, authors, size, parts, createdBy, ttl (automatic ones)
 *   pk D   sk V#<editor>#P#<versionId>#<nnnn>    part n (0..parts-1) of the state (binary, PART_BYTES each), ttl
 *   pk D   sk V#<editor>#COUNT                   versions: how many summaries the editor has (the 1,000 bound)
 *   pk D   sk V#<editor>#DUE                     the editor's automatic-version check (below), in gsi2 by due time
 *
 * Version ids are time-ordered (`ver_` + time + random, shared/core/ids.ts), so the summaries sort by creation and
 * a list is one Query of the summaries backwards, reading about 0.3 KB per version and never a state: a page of 20
 * is about 6 KB, 2 read units strongly consistent. A version is found by id with one GetItem, and its state with
 * one Query of its parts (a 3 MB state: about 750 read units, as reading the editor costs).
 *
 * Why here and not in an object store (docs/project-decisions.md): the stack has none, the editor's own state is
 * already split into 300 KB items this way, and a version then moves with its document (migration copies the whole
 * partition) and is read with the same consistency as the editor. Parts are written with BatchWriteItem (1 write
 * unit per KB, half a transaction's) before the summary, which with the count goes in one transaction: a version
 * exists once its summary does, and parts without a summary (a failed create) are unreachable and deleted.
 * Automatic versions carry a TTL (30 days): DynamoDB deletes their summary and parts; the count is recounted from
 * the summaries when it reaches the bound, so expired versions never hold a place.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unlessConditionFails } from './conditional';
import { timeOrderedId, isTimeOrderedId } from '../core/ids';
import { batchWrite, deleteRequest, putRequest, type Item, type ItemKey } from './batch';
import { TABLE_NAME, db } from './client';
import { PART_BYTES, crdtDocumentPartition, type CrdtType, type EditorRef, type TransactionWriter } from './crdt';
import { key, prefix, segment, sortableNumber } from './keys';
import { queryAll, readPage, type Page } from './query';
import { TTL_ATTRIBUTE } from './table-definition';
import { named, transactWrite, type TransactItem } from './transact';

export const VERSION_KINDS = ['auto', 'manual', 'restore'] as const;
export type VersionKind = (typeof VERSION_KINDS)[number];

export const VERSION_ID_PREFIX = 'ver_';
/** Versions an editor keeps at most (decisions §14). */
export const MAX_VERSIONS = 1000;
/** How long an automatic version is kept. */
export const AUTO_VERSION_DAYS = 30;

/** A version as the API answers it (decisions §14). */
export interface Version {
  versionId: string;
  editorId: string;
  kind: VersionKind;
  name?: string;
  /** ms */
  createdAt: number;
  authors: string[];
  /** Bytes of its Yjs state. */
  size: number;
}

/** What a version keeps of its editor besides the state, so that it reads as the editor did (Get CRDT Data). */
export interface VersionedEditor {
  type: CrdtType;
  contentKey: string;
  /** The editor's last update and its author at the version (ISO 8601). */
  lastUpdate: string;
  lastUpdatedBy: string | null;
}

export interface NewVersion {
  kind: VersionKind;
  name?: string;
  createdBy?: string;
  authors: readonly string[];
  state: Uint8Array;
  editor: VersionedEditor;
}

const editorVersions = (editorId: string) => ['V', segment(editorId)];
const summaryPrefix = (editorId: string) => prefix(...editorVersions(editorId), 'S');
const summaryKey = (apiKeyId: string, ref: EditorRef, versionId: string): ItemKey => ({
  pk: crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key(...editorVersions(ref.editorId), 'S', versionId),
});
const partsPrefix = (editorId: string, versionId: string) => prefix(...editorVersions(editorId), 'P', versionId);
const partKey = (apiKeyId: string, ref: EditorRef, versionId: string, part: number): ItemKey => ({
  pk: crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key(...editorVersions(ref.editorId), 'P', versionId, sortableNumber(part, 4)),
});
const countKey = (apiKeyId: string, ref: EditorRef): ItemKey => ({
  pk: crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key(...editorVersions(ref.editorId), 'COUNT'),
});

/** Whether `id` has the shape of a version id (a request's id that cannot be one is simply not found). */
export const isVersionId = (id: string) => isTimeOrderedId(VERSION_ID_PREFIX, id);

function toVersion(item: Item): Version {
  return {
    versionId: String(item.versionId),
    editorId: String(item.editorId),
    kind: item.kind as VersionKind,
    ...(typeof item.name === 'string' ? { name: item.name } : {}),
    createdAt: Number(item.createdAt),
    authors: Array.isArray(item.authors) ? item.authors.map(String) : [],
    size: Number(item.size),
  };
}

/** The editor has MAX_VERSIONS versions: the count's condition failed. */
export class VersionsFull extends Error {}

/**
 * Writes a version of the editor: its parts (BatchWriteItem), then its summary and the count in one transaction
 * through `write` (which adds the caller's checks, the document's migration lock), on condition that the editor
 * keeps fewer than MAX_VERSIONS. Throws VersionsFull when it does (the parts written are deleted), and what `write`
 * throws.
 */
export async function putVersion(
  apiKeyId: string,
  ref: EditorRef,
  version: NewVersion,
  now = Date.now(),
  write: TransactionWriter = transactWrite,
): Promise<Version> {
  const versionId = timeOrderedId(VERSION_ID_PREFIX, now);
  const parts = Math.max(1, Math.ceil(version.state.length / PART_BYTES));
  const ttl = version.kind === 'auto' ? { [TTL_ATTRIBUTE]: Math.floor(now / 1000) + AUTO_VERSION_DAYS * 86_400 } : {};
  const partItems = Array.from({ length: parts }, (_, part) => ({
    ...partKey(apiKeyId, ref, versionId, part),
    versionId,
    part,
    state: version.state.subarray(part * PART_BYTES, (part + 1) * PART_BYTES),
    ...ttl,
  }));
  const summary: Version = {
    versionId,
    editorId: ref.editorId,
    kind: version.kind,
    ...(version.name === undefined ? {} : { name: version.name }),
    createdAt: now,
    authors: [...version.authors],
    size: version.state.length,
  };
  await batchWrite(partItems.map(putRequest));
  const items: TransactItem[] = [
    {
      Put: {
        TableName: TABLE_NAME,
        Item: {
          ...summaryKey(apiKeyId, ref, versionId),
          ...summary,
          // Kept, not answered: §14's version has no such field.
          ...(version.createdBy === undefined ? {} : { createdBy: version.createdBy }),
          organizationId: ref.organizationId,
          documentId: ref.documentId,
          editor: version.editor,
          // The stream decoder names a summary by it (shared/db/item-change.ts `crdtVersion`).
          lastUpdate: version.editor.lastUpdate,
          parts,
          ...ttl,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    named(
      {
        Update: {
          TableName: TABLE_NAME,
          Key: countKey(apiKeyId, ref),
          UpdateExpression: 'SET editorId = :editor ADD versions :one',
          ConditionExpression: 'attribute_not_exists(versions) OR versions < :max',
          ExpressionAttributeValues: { ':editor': ref.editorId, ':one': 1, ':max': MAX_VERSIONS },
        },
      },
      () => new VersionsFull(),
    ),
  ];
  try {
    await write(items);
  } catch (error) {
    await batchWrite(partItems.map((item) => deleteRequest({ pk: item.pk, sk: item.sk })));
    throw error;
  }
  return summary;
}

/**
 * One version's summary with what it kept of its editor (one strongly consistent GetItem), or undefined when the
 * editor has no such version.
 */
export async function getVersion(
  apiKeyId: string,
  ref: EditorRef,
  versionId: string,
): Promise<(Version & { editor: VersionedEditor }) | undefined> {
  if (!isVersionId(versionId)) return undefined;
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: summaryKey(apiKeyId, ref, versionId), ConsistentRead: true }),
  );
  return Item === undefined ? undefined : { ...toVersion(Item), editor: Item.editor as VersionedEditor };
}

/**
 * A version's Yjs state (one strongly consistent Query of its parts), or undefined when its parts are not all
 * there (the version is being deleted, or expired).
 */
export async function readVersionState(
  apiKeyId: string,
  ref: EditorRef,
  version: Pick<Version, 'versionId' | 'size'>,
): Promise<Uint8Array | undefined> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :parts)',
    ExpressionAttributeValues: {
      ':pk': crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
      ':parts': partsPrefix(ref.editorId, version.versionId),
    },
    ConsistentRead: true,
  });
  const chunks = items
    .sort((a, b) => Number(a.part) - Number(b.part))
    .map((item) => item.state)
    .filter((state): state is Uint8Array => state instanceof Uint8Array);
  const state = Buffer.concat(chunks);
  if (state.length !== version.size) return undefined;
  return new Uint8Array(state.buffer, state.byteOffset, state.length);
}

/** A page of the editor's versions, newest first, after the sort key `after` (summaries only). */
export async function listVersions(
  apiKeyId: string,
  ref: EditorRef,
  page: { size: number; after?: string },
): Promise<Page<Version>> {
  const read = await readPage(
    {
      partition: crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
      prefix: summaryPrefix(ref.editorId),
      ascending: false,
      consistent: true,
    },
    { size: page.size, after: page.after },
  );
  return { items: read.items.map(toVersion), ...(read.after === undefined ? {} : { after: read.after }) };
}

/**
 * Deletes a version: its summary (on condition it exists) and the count in one transaction through `write`, then
 * its parts. Returns false, deleting nothing, when the editor has no such version.
 */
export async function deleteVersion(
  apiKeyId: string,
  ref: EditorRef,
  version: Pick<Version, 'versionId' | 'size'>,
  write: TransactionWriter = transactWrite,
): Promise<boolean> {
  class Gone extends Error {}
  try {
    await write([
      named(
        {
          Delete: {
            TableName: TABLE_NAME,
            Key: summaryKey(apiKeyId, ref, version.versionId),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        () => new Gone(),
      ),
      {
        Update: {
          TableName: TABLE_NAME,
          Key: countKey(apiKeyId, ref),
          UpdateExpression: 'ADD versions :minus',
          ExpressionAttributeValues: { ':minus': -1 },
        },
      },
    ]);
  } catch (error) {
    if (error instanceof Gone) return false;
    throw error;
  }
  await deleteParts(apiKeyId, ref, version);
  return true;
}

async function deleteParts(apiKeyId: string, ref: EditorRef, version: Pick<Version, 'versionId' | 'size'>) {
  const parts = Math.max(1, Math.ceil(version.size / PART_BYTES));
  await batchWrite(
    Array.from({ length: parts }, (_, part) => deleteRequest(partKey(apiKeyId, ref, version.versionId, part))),
  );
}

/**
 * The editor's versions as the bound needs them: how many there are (summaries read, expired ones gone) and the
 * oldest automatic one. Reads every summary (keys, kind and size only: about 100 bytes each, 25 read units for
 * 1,000); only a create that finds the count at the bound calls it.
 */
export async function versionCensus(
  apiKeyId: string,
  ref: EditorRef,
): Promise<{ count: number; oldestAuto?: Pick<Version, 'versionId' | 'size'> }> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :summaries)',
    ExpressionAttributeValues: {
      ':pk': crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
      ':summaries': summaryPrefix(ref.editorId),
      ':now': Math.floor(Date.now() / 1000),
    },
    // TTL deletes some time after expiry: an expired version no longer counts.
    FilterExpression: 'attribute_not_exists(#ttl) OR #ttl > :now',
    ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE, '#kind': 'kind', '#size': 'size' },
    ProjectionExpression: 'versionId, #kind, #size',
    ConsistentRead: true,
  });
  const oldest = items.find((item) => item.kind === 'auto');
  return {
    count: items.length,
    ...(oldest === undefined ? {} : { oldestAuto: { versionId: String(oldest.versionId), size: Number(oldest.size) } }),
  };
}

/**
 * Records on a `restore` version that the restore it kept the content for was applied (the version restored): the
 * change the events consumer raises `crdt.version_restored` from, after the restore's edit is stored.
 */
export async function markRestored(
  apiKeyId: string,
  ref: EditorRef,
  versionId: string,
  restoredVersionId: string,
): Promise<void> {
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: summaryKey(apiKeyId, ref, versionId),
        UpdateExpression: 'SET restoredVersionId = :restored',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':restored': restoredVersionId },
      }),
    ),
  );
}

/** Sets the editor's count of versions to what a census found (expired automatic versions leave it too high). */
export function recountItem(apiKeyId: string, ref: EditorRef, count: number): TransactItem {
  return {
    Put: {
      TableName: TABLE_NAME,
      Item: { ...countKey(apiKeyId, ref), editorId: ref.editorId, versions: count },
    },
  };
}

/**
 * Automatic versions (decisions §14) are found by when they are due, never by a scan: an editor that changed has a
 * small "version check" item beside its versions, in gsi2 by the time it is due:
 *
 *   pk D   sk V#<editor>#DUE     apiKeyId, organizationId, documentId, editorId;
 *                                gsi2pk VERSIONDUE#<shard>, gsi2sk <due, ms>
 *
 * The changes reader writes it when the editor changes and it is absent (a conditional Put: 1 write unit per editor
 * per stream batch, nothing in the index when it exists); the scheduled worker Queries each shard up to now, and for
 * each editor due either keeps an automatic version and deletes the item (on condition that the editor did not
 * change since it looked, in the same transaction), or moves it to when it will be due. The index spans tenants, as
 * the live access backstop's does; it is sharded by editor so no partition takes every change.
 */
export const VERSION_CHECK_SHARDS = 8;

/** An editor whose version check is due, as the index gives it. */
export interface VersionCheck {
  apiKeyId: string;
  ref: EditorRef;
  /** ms */
  due: number;
}

const versionCheckPartition = (shard: number) => key('VERSIONDUE', String(shard));
const checkKey = (apiKeyId: string, ref: EditorRef): ItemKey => ({
  pk: crdtDocumentPartition(apiKeyId, ref.organizationId, ref.documentId),
  sk: key(...editorVersions(ref.editorId), 'DUE'),
});

function versionCheckShard(apiKeyId: string, ref: EditorRef): number {
  let hash = 0;
  for (const char of `${apiKeyId}\n${ref.organizationId}\n${ref.documentId}\n${ref.editorId}`)
    hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return hash % VERSION_CHECK_SHARDS;
}

/** Writes the editor's version check, due at `due` (ms), unless it has one. Returns whether it wrote one. */
export async function scheduleVersionCheck(apiKeyId: string, ref: EditorRef, due: number): Promise<boolean> {
  const written = await unlessConditionFails(
    db.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: {
          ...checkKey(apiKeyId, ref),
          apiKeyId,
          organizationId: ref.organizationId,
          documentId: ref.documentId,
          editorId: ref.editorId,
          due,
          gsi2pk: versionCheckPartition(versionCheckShard(apiKeyId, ref)),
          gsi2sk: sortableNumber(Math.max(0, Math.floor(due))),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
  return written !== undefined;
}

/** The version checks of one shard due at `now` or before, oldest first (one gsi2 Query, at most `max`). */
export async function versionChecksDue(shard: number, now: number, max: number): Promise<VersionCheck[]> {
  const items = await queryAll(
    {
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk <= :now',
      ExpressionAttributeValues: {
        ':pk': versionCheckPartition(shard),
        ':now': sortableNumber(Math.max(0, Math.floor(now))),
      },
    },
    max,
  );
  return items.map((item) => ({
    apiKeyId: String(item.apiKeyId),
    ref: {
      organizationId: String(item.organizationId),
      documentId: String(item.documentId),
      editorId: String(item.editorId),
    },
    due: Number(item.due),
  }));
}

/** Moves the editor's version check to `due` (ms), if it still has one. */
export async function moveVersionCheck(apiKeyId: string, ref: EditorRef, due: number): Promise<void> {
  await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: checkKey(apiKeyId, ref),
        UpdateExpression: 'SET due = :due, gsi2sk = :sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':due': due, ':sk': sortableNumber(Math.max(0, Math.floor(due))) },
      }),
    ),
  );
}

/** The delete of the editor's version check, for a transaction with the caller's check that nothing changed. */
export function versionCheckDelete(apiKeyId: string, ref: EditorRef): TransactItem {
  return { Delete: { TableName: TABLE_NAME, Key: checkKey(apiKeyId, ref) } };
}
