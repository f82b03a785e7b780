/**
 * Organizations, their folders and documents, in one partition per organization:
 *
 *   pk T#<key>#ORG#<org>   sk ORG            the organization
 *   pk T#<key>#ORG#<org>   sk FOLDER#<f>     a folder
 *   pk T#<key>#ORG#<org>   sk DOC#<d>        a document (name, folder, accessType, disabled, metadata)
 *                          gsi1: T#<key>#ORG#<org>#FOLDER#<f> / DOC#<d>   documents of a folder
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, type Item } from './batch';
import { TABLE_NAME, db } from './client';
import { fromJsonAttribute, toJsonAttribute } from './json-attribute';
import { key, prefix, segment, tenantKey } from './keys';
import { AlreadyExistsError, NotFoundError } from '../core/errors';
import { mapPage, readPage, type Listing, type Page } from './query';
import { named, type TransactItem } from './transact';

export type AccessType = 'organizationPrivate' | 'restricted' | 'public';
export const ACCESS_TYPES = ['organizationPrivate', 'restricted', 'public'] as const;

export interface DocumentRecord {
  organizationId: string;
  documentId: string;
  documentName?: string;
  folderId?: string;
  accessType: AccessType;
  disabled: boolean;
  metadata?: Record<string, string>;
  createdAt: number;
  updatedAt: number;
}

/** Partition of everything that hangs off one organization. */
export const organizationPartition = (apiKeyId: string, organizationId: string) =>
  tenantKey(apiKeyId, 'ORG', segment(organizationId));

export const organizationKey = (apiKeyId: string, organizationId: string) => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: 'ORG',
});
export const folderKey = (apiKeyId: string, organizationId: string, folderId: string) => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: key('FOLDER', segment(folderId)),
});
export const documentKey = (apiKeyId: string, organizationId: string, documentId: string) => ({
  pk: organizationPartition(apiKeyId, organizationId),
  sk: key('DOC', segment(documentId)),
});
const folderDocumentsPartition = (apiKeyId: string, organizationId: string, folderId: string) =>
  key(organizationPartition(apiKeyId, organizationId), 'FOLDER', segment(folderId));

function toDocument(item: Item): DocumentRecord {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g1s, metadata, ...rest } = item;
  const document = rest as unknown as DocumentRecord;
  // Stored as a JSON string (shared/db/json-attribute.ts): metadata keys are the client's.
  return metadata === undefined
    ? document
    : { ...document, metadata: fromJsonAttribute<Record<string, string>>(metadata) };
}

async function exists(itemKey: { pk: string; sk: string }): Promise<boolean> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: itemKey, ConsistentRead: true, ProjectionExpression: 'pk' }),
  );
  return Item !== undefined;
}

export const organizationExists = (apiKeyId: string, organizationId: string) =>
  exists(organizationKey(apiKeyId, organizationId));
export const folderExists = (apiKeyId: string, organizationId: string, folderId: string) =>
  exists(folderKey(apiKeyId, organizationId, folderId));

export async function getDocument(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
): Promise<DocumentRecord | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: TABLE_NAME,
      Key: documentKey(apiKeyId, organizationId, documentId),
      ConsistentRead: true,
    }),
  );
  return Item ? toDocument(Item) : undefined;
}

/** The documents that exist among `documentIds`, keyed by id (one BatchGet per 100). */
export async function getDocuments(
  apiKeyId: string,
  organizationId: string,
  documentIds: readonly string[],
): Promise<Map<string, DocumentRecord>> {
  const items = await batchGet(documentIds.map((id) => documentKey(apiKeyId, organizationId, id)));
  return new Map(items.map(toDocument).map((document) => [document.documentId, document]));
}

/**
 * One page of the organization's documents (in sort-key order), or of one folder's documents (through gsi1,
 * eventually consistent in AWS), starting after the document `after` (the last id of the previous page; it need
 * not exist any more); the page's `after` is the id of its last document when more follow. Reads a page and one
 * item more, so that a page is full whenever more documents exist.
 */
export async function listDocuments(
  apiKeyId: string,
  organizationId: string,
  options: { folderId?: string; limit: number; after?: string },
): Promise<Page<DocumentRecord>> {
  const { folderId, limit, after } = options;
  const listing: Listing =
    folderId === undefined
      ? { partition: organizationPartition(apiKeyId, organizationId), prefix: prefix('DOC'), consistent: true }
      : { index: 'gsi1', partition: folderDocumentsPartition(apiKeyId, organizationId, folderId) };
  // Both sort keys are the document's own (its gsi1sk is its sk), so page tokens carry an id rather than the key layout.
  const page = await readPage(listing, {
    size: limit,
    after: after === undefined ? undefined : documentKey(apiKeyId, organizationId, after).sk,
  });
  return mapPage(page, toDocument, (document) => document.documentId);
}

/** Creates the organization when missing; leaves an existing one as it is (no condition: never fails). */
export function ensureOrganizationItem(apiKeyId: string, organizationId: string, now: number): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: organizationKey(apiKeyId, organizationId),
      UpdateExpression: 'SET organizationId = :org, createdAt = if_not_exists(createdAt, :now)',
      ExpressionAttributeValues: { ':org': organizationId, ':now': now },
    },
  };
}

/** Checks, inside a transaction, that the organization exists. */
export function requireOrganizationItem(apiKeyId: string, organizationId: string): TransactItem {
  return named(
    {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: organizationKey(apiKeyId, organizationId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    () => new NotFoundError('Organization not found.'),
  );
}

/** Checks, inside a transaction, that the document exists. */
export function requireDocumentItem(apiKeyId: string, organizationId: string, documentId: string): TransactItem {
  return named(
    {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: documentKey(apiKeyId, organizationId, documentId),
        ConditionExpression: 'attribute_exists(pk)',
      },
    },
    () => new NotFoundError('Document not found.'),
  );
}

/** Creates the folder when missing (never fails). */
export function ensureFolderItem(
  apiKeyId: string,
  organizationId: string,
  folderId: string,
  now: number,
): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: folderKey(apiKeyId, organizationId, folderId),
      UpdateExpression: 'SET organizationId = :org, folderId = :folder, createdAt = if_not_exists(createdAt, :now)',
      ExpressionAttributeValues: { ':org': organizationId, ':folder': folderId, ':now': now },
    },
  };
}

export interface DocumentFields {
  documentName?: string;
  folderId?: string;
  accessType?: AccessType;
  disabled?: boolean;
  metadata?: Record<string, string>;
}

const DOCUMENT_FIELDS = [
  'documentName',
  'folderId',
  'accessType',
  'disabled',
  'metadata',
] as const satisfies ReadonlyArray<keyof DocumentFields>;

/**
 * SET clauses for the fields present in `fields` (and the folder index keys when the folder is set). Only the
 * named document fields are read, so a caller passing a wider object can never write keys or server fields.
 */
function documentUpdate(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  fields: DocumentFields,
  now: number,
) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':now': now };
  const sets = ['updatedAt = :now'];
  for (const field of DOCUMENT_FIELDS) {
    const value = field === 'metadata' ? toJsonAttribute(fields.metadata) : fields[field];
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  if (fields.folderId !== undefined) {
    values[':gsi1pk'] = folderDocumentsPartition(apiKeyId, organizationId, fields.folderId);
    values[':gsi1sk'] = documentKey(apiKeyId, organizationId, documentId).sk;
    sets.push('gsi1pk = :gsi1pk', 'gsi1sk = :gsi1sk');
  }
  return { sets, names, values };
}

/**
 * Creates the document when missing (accessType `organizationPrivate`, enabled) and sets the given fields; an
 * existing document keeps the fields not given. Never fails.
 */
export function upsertDocumentItem(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  fields: DocumentFields,
  now: number,
): TransactItem {
  const { sets, names, values } = documentUpdate(apiKeyId, organizationId, documentId, fields, now);
  const defaults: Array<[string, unknown]> = [
    ['organizationId', organizationId],
    ['documentId', documentId],
    ['createdAt', now],
    ['accessType', 'organizationPrivate'],
    ['disabled', false],
  ];
  for (const [field, value] of defaults) {
    if (`#${field}` in names) continue;
    names[`#${field}`] = field;
    values[`:d_${field}`] = value;
    sets.push(`#${field} = if_not_exists(#${field}, :d_${field})`);
  }
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: documentKey(apiKeyId, organizationId, documentId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/** Sets the given fields of an existing document, inside a transaction; the item fails its condition when the document does not exist. */
export function updateDocumentItem(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  fields: DocumentFields,
  now: number,
): TransactItem {
  const { sets, names, values } = documentUpdate(apiKeyId, organizationId, documentId, fields, now);
  return named(
    {
      Update: {
        TableName: TABLE_NAME,
        Key: documentKey(apiKeyId, organizationId, documentId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
        ExpressionAttributeValues: values,
      },
    },
    () => new NotFoundError('Document does not exist.'),
  );
}

/**
 * The writes that move the document item to another id inside a transaction (the last step of a migration): the
 * item under the new id, which must not exist, with every field kept and its folder index following, and the
 * delete of the old one. Empty when the document does not exist (any more).
 */
export async function moveDocumentItems(
  apiKeyId: string,
  organizationId: string,
  fromDocumentId: string,
  toDocumentId: string,
): Promise<TransactItem[]> {
  const from = documentKey(apiKeyId, organizationId, fromDocumentId);
  const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: from, ConsistentRead: true }));
  if (Item === undefined) return [];
  const to = documentKey(apiKeyId, organizationId, toDocumentId);
  const moved: Item = {
    ...Item,
    ...to,
    documentId: toDocumentId,
    ...(Item.gsi1pk === undefined ? {} : { gsi1sk: to.sk }),
  };
  return [
    { Put: { TableName: TABLE_NAME, Item: moved, ConditionExpression: 'attribute_not_exists(pk)' } },
    { Delete: { TableName: TABLE_NAME, Key: from } },
  ];
}

/** Checks, inside a transaction, that no document has the id (the item fails its condition if one does). */
export function requireNoDocumentItem(apiKeyId: string, organizationId: string, documentId: string): TransactItem {
  return named(
    {
      ConditionCheck: {
        TableName: TABLE_NAME,
        Key: documentKey(apiKeyId, organizationId, documentId),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    () => new AlreadyExistsError('A document with this id already exists.'),
  );
}
