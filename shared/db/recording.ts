/**
 * Recording annotations (O = T#<key>#ORG#<org>, the organization partition):
 *
 *   pk O   sk REC#<annotationId>                     the recording (content, documentId, createdAt, updatedAt)
 *      gsi1: O#RECS / <position>                    the organization's recordings in creation order
 *      gsi2: O#DOC#<d>#RECS / <position>            a document's recordings in creation order
 *
 * `<position>` is `<createdAt ms, zero-padded>#<index in the adding request, zero-padded>#<annotationId>`: set once,
 * when the recording is first added, so a re-add keeps its place and a page cursor (a position) stays valid.
 *
 * An annotationId names one recording in an organization: the item key holds no document, so recordings can be
 * read by id with the organization alone (BatchGet), and moving a document's recordings to another document id
 * (document migration, recordingMovedTo) rewrites `documentId` and the gsi2 key of each item, never its key.
 */
import { batchGet, type Item, type ItemKey } from './batch';
import { TABLE_NAME } from './client';
import { key, segment, sortableNumber } from './keys';
import { organizationPartition } from './organization';
import { mapPage, readPage, type Page, type QuerySpec } from './query';
import { named, type TransactItem } from './transact';

export interface RecordedTime {
  duration?: number;
  display?: string;
}

export interface RecordingAttachment {
  attachmentId?: number;
  url: string;
  mimeType?: string;
  name?: string;
  type?: string;
  size?: number;
}

/** The client-supplied fields of a recording annotation (docs/api-spec.md "Recording annotation", without metadata). */
export interface RecordingContent {
  type?: string;
  recordingType?: string;
  mode?: string;
  recordedTime?: RecordedTime;
  displayName?: string;
  attachments?: RecordingAttachment[];
  latestVersion?: number;
}

export interface RecordingRecord extends RecordingContent {
  /** Always stored: Add Recordings sets `recorder` when the client gives none (shared/domain/recordings.ts). */
  type: string;
  organizationId: string;
  documentId: string;
  annotationId: string;
  /** First added, ms. */
  createdAt: number;
  updatedAt: number;
  /** Opaque ordering key (creation order); page cursors hold it. */
  position: string;
}

/** Every content field: a re-add sets the ones given and removes the others (the recording is replaced). */
const CONTENT_FIELDS = [
  'type',
  'recordingType',
  'mode',
  'recordedTime',
  'displayName',
  'attachments',
  'latestVersion',
] as const satisfies ReadonlyArray<keyof RecordingContent>;

export const recordingKey = (apiKeyId: string, organizationId: string, annotationId: string): ItemKey => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: key('REC', segment(annotationId)),
});
const organizationRecordings = (apiKeyId: string, organizationId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'RECS');
const documentRecordings = (apiKeyId: string, organizationId: string, documentId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'DOC', segment(documentId), 'RECS');
const positionKey = (createdAt: number, index: number, annotationId: string) =>
  key(sortableNumber(createdAt), sortableNumber(index, 4), segment(annotationId));

export function toRecording(item: Item): RecordingRecord {
  const { pk: _pk, sk: _sk, gsi1pk: _a, gsi1sk: position, gsi2pk: _c, gsi2sk: _d, ...rest } = item;
  return { ...(rest as unknown as Omit<RecordingRecord, 'position'>), position: String(position) };
}

/**
 * Adds the recording, or replaces the content of the one with the same annotationId in the same document (its
 * creation time and position are kept), inside a transaction. The item fails with RecordingInAnotherDocument when
 * the annotationId already names a recording of another document of the organization. `index` orders recordings
 * added in the same millisecond (their place in the request).
 */
/** The annotationId names a recording of another document of the organization: a per-item failure. */
export class RecordingInAnotherDocument extends Error {
  constructor(readonly annotationId: string) {
    super(`Recording ${annotationId} belongs to another document.`);
    this.name = 'RecordingInAnotherDocument';
  }
}

export function putRecordingItem(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  annotationId: string,
  content: RecordingContent,
  options: { now: number; index: number },
): TransactItem {
  const names: Record<string, string> = { '#documentId': 'documentId' };
  const values: Record<string, unknown> = {
    ':org': organizationId,
    ':documentId': documentId,
    ':id': annotationId,
    ':now': options.now,
    ':g1': organizationRecordings(apiKeyId, organizationId),
    ':g2': documentRecordings(apiKeyId, organizationId, documentId),
    ':position': positionKey(options.now, options.index, annotationId),
  };
  const sets = [
    'organizationId = :org',
    '#documentId = :documentId',
    'annotationId = :id',
    'updatedAt = :now',
    'createdAt = if_not_exists(createdAt, :now)',
    'gsi1pk = :g1',
    'gsi1sk = if_not_exists(gsi1sk, :position)',
    'gsi2pk = :g2',
    'gsi2sk = if_not_exists(gsi2sk, :position)',
  ];
  const removes: string[] = [];
  for (const field of CONTENT_FIELDS) {
    names[`#${field}`] = field;
    const value = content[field];
    if (value === undefined) {
      removes.push(`#${field}`);
    } else {
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
  }
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: recordingKey(apiKeyId, organizationId, annotationId),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: 'attribute_not_exists(pk) OR #documentId = :documentId',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
    () => new RecordingInAnotherDocument(annotationId),
  );
}

/** The recordings among `annotationIds` that exist (any document of the organization). */
export async function getRecordings(
  apiKeyId: string,
  organizationId: string,
  annotationIds: readonly string[],
  options: { consistent?: boolean } = {},
): Promise<RecordingRecord[]> {
  const items = await batchGet(
    annotationIds.map((id) => recordingKey(apiKeyId, organizationId, id)),
    options,
  );
  return items.map(toRecording);
}

/**
 * One page of the organization's recordings (gsi1) or of one document's (gsi2), in creation order, after the
 * position `after` (a key condition, so the cursor's recording need not exist any more); the page's `after` is
 * the position of its last recording when more follow. Reads a page and one item more, so a page is full
 * whenever more recordings exist. Both indexes are eventually consistent in AWS.
 */
export async function queryRecordings(
  apiKeyId: string,
  organizationId: string,
  options: { documentId?: string; limit: number; after?: string },
): Promise<Page<RecordingRecord>> {
  const listing =
    options.documentId === undefined
      ? { index: 'gsi1', partition: organizationRecordings(apiKeyId, organizationId) }
      : { index: 'gsi2', partition: documentRecordings(apiKeyId, organizationId, options.documentId) };
  return mapPage(await readPage(listing, { size: options.limit, after: options.after }), toRecording);
}

/** Every recording of one document, through its timeline (gsi2): what document migration moves. */
export function documentRecordingsQuery(apiKeyId: string, organizationId: string, documentId: string): QuerySpec {
  return {
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': documentRecordings(apiKeyId, organizationId, documentId) },
  };
}

/**
 * A recording as it is in another document: the same item (same key, so read by id as before) with `documentId`
 * and the document timeline key changed; its position, and so its place in every listing, is kept.
 */
export function recordingMovedTo(apiKeyId: string, item: Item, documentId: string): Item {
  return { ...item, documentId, gsi2pk: documentRecordings(apiKeyId, String(item.organizationId), documentId) };
}
