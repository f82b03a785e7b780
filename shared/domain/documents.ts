/**
 * Documents of an organization (docs/decisions.md §5 and §10): add, list, update, disable. The fields add and update
 * accept are `documentFields` in shared/http/schemas.ts.
 *
 * Rules where the contract is silent (also in docs/project-decisions.md):
 * - `documentName` is returned as the stored name, or `""` when none was ever given (the field is always present).
 * - `metadata` given to Update replaces the stored map as a whole (at most 50 entries), so a document stays
 *   well inside DynamoDB's 400 KB item limit however often it is updated.
 * - A document cannot be taken out of its folder, only moved to another one (`folderId` must be an id).
 * - Add on an existing document changes only the fields given; it never re-enables a disabled document.
 */
import { pageTokenAfter, readPageAfter } from '../db/page-token';
import {
  ensureFolderItem,
  ensureOrganizationItem,
  getDocuments,
  listDocuments,
  requireOrganizationItem,
  updateDocumentItem,
  upsertDocumentItem,
  type AccessType,
  type DocumentFields,
  type DocumentRecord,
} from '../db/organization';
import { namedPage } from '../db/query';
import { batchResult, notWritten, reportOf, settleEach, type BatchResult, type ItemFailure } from './batch-result';
import { NotFoundError } from '../core/errors';
import {
  assertDocumentsWritable,
  documentsIn,
  transactGuarded,
  writeGroupsGuarded,
  type WriteGroup,
} from './document-locks';

export interface DocumentInput {
  documentId: string;
  documentName?: string;
  folderId?: string;
  accessType?: AccessType;
  metadata?: Record<string, string>;
}

/** A document as the API returns it. */
export interface DocumentView {
  documentId: string;
  documentName: string;
  folderId?: string;
  accessType: AccessType;
  disabled: boolean;
  metadata?: Record<string, string>;
}

/** A document's item in Add Documents and Update Documents: its id, unless not written. */
export type DocumentResult = { success: boolean; id: string; message: string };

const NOT_FOUND_MESSAGE = 'Document does not exist.';

/** The stored fields an input sets: never the id, never server fields. */
const fieldsOf = ({ documentName, folderId, accessType, metadata }: DocumentInput): DocumentFields => ({
  documentName,
  folderId,
  accessType,
  metadata,
});

/**
 * Adds (or updates, idempotently) `documents`, creating the folders they name. The organization must exist
 * unless `createOrganization` is true. Writes run in transactions of at most 100 items, the first holding the
 * organization's check or creation, each checking that its documents are not being migrated, so no document is
 * written into a missing organization or into a migration. Throws NotFoundError `Organization not found.` and
 * FailedPreconditionError (a document is being migrated), nothing written; a failure after the first transaction
 * answers the documents written success and the others not written.
 */
export async function addDocuments(
  apiKeyId: string,
  organizationId: string,
  documents: readonly DocumentInput[],
  options: { createOrganization: boolean },
): Promise<BatchResult<DocumentResult | ItemFailure>> {
  const now = Date.now();
  const organization = options.createOrganization
    ? ensureOrganizationItem(apiKeyId, organizationId, now)
    : requireOrganizationItem(apiKeyId, organizationId);
  await assertDocumentsWritable(
    apiKeyId,
    documentsIn(
      organizationId,
      documents.map((document) => document.documentId),
    ),
  );
  const folderIds = [
    ...new Set(documents.flatMap((document) => (document.folderId === undefined ? [] : [document.folderId]))),
  ];
  // Folders before documents: a transaction that commits never leaves a document in a folder that does not exist.
  const groups: WriteGroup[] = [
    ...folderIds.map((folderId) => ({
      items: [ensureFolderItem(apiKeyId, organizationId, folderId, now)],
      documents: [],
    })),
    ...documents.map((document) => ({
      items: [upsertDocumentItem(apiKeyId, organizationId, document.documentId, fieldsOf(document), now)],
      documents: documentsIn(organizationId, [document.documentId]),
    })),
  ];
  const report = await reportOf(writeGroupsGuarded(apiKeyId, groups, { items: [organization], documents: [] }));
  return batchResult(
    documents.map((document, i) => ({ document, group: folderIds.length + i })),
    ({ document }) => document.documentId,
    ({ document, group }) =>
      report.written(group)
        ? { success: true, id: document.documentId, message: 'Document added.' }
        : notWritten(report.failure),
  );
}

/**
 * Sets the present fields of one existing document (moving it creates the target folder) in one transaction with
 * its lock check; false when it does not exist. Throws FailedPreconditionError when it is being migrated.
 */
async function updateOne(
  apiKeyId: string,
  organizationId: string,
  documentId: string,
  fields: DocumentFields,
  now: number,
): Promise<boolean> {
  // One transaction, so an unknown document never leaves a new empty folder behind.
  const items = [
    ...(fields.folderId === undefined ? [] : [ensureFolderItem(apiKeyId, organizationId, fields.folderId, now)]),
    updateDocumentItem(apiKeyId, organizationId, documentId, fields, now),
  ];
  try {
    await transactGuarded(apiKeyId, items, documentsIn(organizationId, [documentId]));
    return true;
  } catch (error) {
    // The document's update names its missing document NOT_FOUND: a per-item failure here.
    if (error instanceof NotFoundError) return false;
    throw error;
  }
}

/**
 * Updates the fields present in each of `documents`; an unknown document is a per-item failure. One transaction
 * each. Throws FailedPreconditionError (nothing written) when any of them is being migrated.
 */
export async function updateDocuments(
  apiKeyId: string,
  organizationId: string,
  documents: readonly DocumentInput[],
): Promise<BatchResult<DocumentResult | ItemFailure>> {
  const now = Date.now();
  await assertDocumentsWritable(
    apiKeyId,
    documentsIn(
      organizationId,
      documents.map((document) => document.documentId),
    ),
  );
  return settleEach(
    documents,
    (document) => document.documentId,
    async (document) => {
      const updated = await updateOne(apiKeyId, organizationId, document.documentId, fieldsOf(document), now);
      return { success: updated, id: document.documentId, message: updated ? 'Document updated.' : NOT_FOUND_MESSAGE };
    },
  );
}

/**
 * Disables or enables each of `documentIds`; an unknown document is a per-item failure (without `disabled`).
 * Throws FailedPreconditionError (nothing written) when any of them is being migrated.
 */
export async function setDocumentsDisabled(
  apiKeyId: string,
  organizationId: string,
  documentIds: readonly string[],
  disabled: boolean,
): Promise<BatchResult<{ success: true; disabled: boolean; message: string } | ItemFailure>> {
  const now = Date.now();
  await assertDocumentsWritable(apiKeyId, documentsIn(organizationId, documentIds));
  return settleEach(
    documentIds,
    (documentId) => documentId,
    async (documentId) =>
      (await updateOne(apiKeyId, organizationId, documentId, { disabled }, now))
        ? { success: true, disabled, message: disabled ? 'Document disabled.' : 'Document enabled.' }
        : { success: false, message: NOT_FOUND_MESSAGE },
  );
}

function toView(document: DocumentRecord): DocumentView {
  return {
    documentId: document.documentId,
    documentName: document.documentName ?? '',
    ...(document.folderId === undefined ? {} : { folderId: document.folderId }),
    accessType: document.accessType,
    disabled: document.disabled,
    ...(document.metadata === undefined ? {} : { metadata: document.metadata }),
  };
}

export interface DocumentQuery {
  organizationId: string;
  folderId?: string;
  documentIds?: readonly string[];
}

export interface DocumentListing {
  documents: DocumentView[];
  pageToken?: string;
}

/** The named documents in id order after `after`, those in `folderId` only (see namedPage). */
function namedDocuments(apiKeyId: string, query: DocumentQuery, ids: readonly string[], limit: number, after?: string) {
  const stored = async (batch: string[]) => {
    const found = await getDocuments(apiKeyId, query.organizationId, batch);
    return batch
      .map((id) => found.get(id))
      .filter(
        (document): document is DocumentRecord =>
          document !== undefined && (query.folderId === undefined || document.folderId === query.folderId),
      );
  };
  return namedPage(ids, stored, { size: limit, after, keyOf: (document) => document.documentId });
}

/**
 * One page of the organization's documents: all of them, those of one folder, or the named ones (filters
 * intersect; unknown ids are skipped and pages stay full). An unknown organization gives an empty page. Cost
 * is one page plus one item. Throws InvalidArgumentError for a page token of another key or another query.
 */
export async function listOrganizationDocuments(
  apiKeyId: string,
  query: DocumentQuery,
  page: { pageSize: number; pageToken?: string },
): Promise<DocumentListing> {
  const documentIds = query.documentIds === undefined ? undefined : [...new Set(query.documentIds)].sort();
  const scope = {
    tenant: apiKeyId,
    query: {
      operation: 'organizations/documents/get',
      organizationId: query.organizationId,
      folderId: query.folderId ?? null,
      documentIds: documentIds ?? null,
    },
  };
  const after = await readPageAfter(page.pageToken, scope);
  const { items: documents, after: next } =
    documentIds === undefined
      ? await listDocuments(apiKeyId, query.organizationId, { folderId: query.folderId, limit: page.pageSize, after })
      : await namedDocuments(apiKeyId, query, documentIds, page.pageSize, after);
  const pageToken = await pageTokenAfter(scope, next);
  return { documents: documents.map(toView), pageToken };
}
