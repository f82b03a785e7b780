/**
 * Organizations, their folders and documents, in one partition per organization:
 *
 *   pk T#<key>#ORG#<org>   sk ORG            the organization
 *   pk T#<key>#ORG#<org>   sk FOLDER#<f>     a folder
 *   pk T#<key>#ORG#<org>   sk DOC#<d>        a document (name, folder, accessType, disabled, metadata)
 *                          gsi1: T#<key>#ORG#<org>#FOLDER#<f> / DOC#<d>   documents of a folder
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { batchGet, type Item } from './batch';
import { TABLE_NAME, db } from './client';
import { key, prefix, segment, tenantKey } from './keys';
import type { TransactItem } from './transact';

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
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g1s, ...rest } = item;
  return rest as unknown as DocumentRecord;
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

export async function getDocument(apiKeyId: string, organizationId: string, documentId: string): Promise<DocumentRecord | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: documentKey(apiKeyId, organizationId, documentId), ConsistentRead: true }),
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

export interface DocumentPage {
  documents: DocumentRecord[];
  /** Sort key of the last document returned, when more may follow. */
  last?: Record<string, string>;
}

/**
 * One page of the organization's documents (in id order), or of one folder's documents (through gsi1), starting
 * after `start` (the `last` of the previous page). Reads `limit + 1` items to know whether more follow.
 */
export async function listDocuments(
  apiKeyId: string,
  organizationId: string,
  options: { folderId?: string; limit: number; start?: Record<string, string> },
): Promise<DocumentPage> {
  const query = options.folderId === undefined
    ? {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :doc)',
        ExpressionAttributeValues: { ':pk': organizationPartition(apiKeyId, organizationId), ':doc': prefix('DOC') },
        ConsistentRead: true,
      }
    : {
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': folderDocumentsPartition(apiKeyId, organizationId, options.folderId) },
      };
  const { Items = [] } = await db.send(
    new QueryCommand({ TableName: TABLE_NAME, ...query, ExclusiveStartKey: options.start, Limit: options.limit + 1 }),
  );
  const documents = Items.slice(0, options.limit).map(toDocument);
  if (Items.length <= options.limit) return { documents };
  const lastItem = Items[options.limit - 1];
  const last: Record<string, string> = { pk: String(lastItem.pk), sk: String(lastItem.sk) };
  if (options.folderId !== undefined) Object.assign(last, { gsi1pk: String(lastItem.gsi1pk), gsi1sk: String(lastItem.gsi1sk) });
  return { documents, last };
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
  return {
    ConditionCheck: {
      TableName: TABLE_NAME,
      Key: organizationKey(apiKeyId, organizationId),
      ConditionExpression: 'attribute_exists(pk)',
    },
  };
}

/** Creates the folder when missing (never fails). */
export function ensureFolderItem(apiKeyId: string, organizationId: string, folderId: string, now: number): TransactItem {
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

/** SET clauses for the fields present in `fields` (and the folder index keys when the folder is set). */
function documentUpdate(apiKeyId: string, organizationId: string, fields: DocumentFields, now: number) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':now': now };
  const sets = ['updatedAt = :now'];
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  if (fields.folderId !== undefined) {
    values[':gsi1pk'] = folderDocumentsPartition(apiKeyId, organizationId, fields.folderId);
    sets.push('gsi1pk = :gsi1pk', 'gsi1sk = sk');
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
  const { sets, names, values } = documentUpdate(apiKeyId, organizationId, fields, now);
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

/**
 * Sets the given fields of an existing document. Returns the document after the update, or undefined when it
 * does not exist (nothing is written then).
 */
export async function updateDocument(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  fields: DocumentFields,
  now: number,
): Promise<DocumentRecord | undefined> {
  const { sets, names, values } = documentUpdate(apiKeyId, organizationId, fields, now);
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: documentKey(apiKeyId, organizationId, documentId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.keys(names).length > 0 ? names : undefined,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes ? toDocument(Attributes) : undefined;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
