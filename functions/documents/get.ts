import { listOrganizationDocuments } from '../../shared/domain/documents';
import { operation } from '../../shared/http/operation';
import { pageWithPageToken } from '../../shared/http/results';
import * as z from 'zod/mini';
import { ACCESS_TYPES } from '../../shared/db/organization';
import { clientId, listOf, pageSize, pageToken } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentIds: z.optional(listOf(clientId())),
  folderId: z.optional(clientId()),
  pageSize: pageSize(1000),
  pageToken: z.optional(pageToken()),
});

/** A page of documents (docs/decisions.md §10); `documentName` is `""` when none was given. */
export const result = pageWithPageToken(
  z.object({
    documentId: z.string(),
    documentName: z.string(),
    folderId: z.optional(z.string()),
    accessType: z.enum(ACCESS_TYPES),
    disabled: z.boolean(),
    metadata: z.optional(z.record(z.string(), z.string())),
  }),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listOrganizationDocuments(
      caller.apiKeyId,
      { organizationId: data.organizationId, folderId: data.folderId, documentIds: data.documentIds },
      { pageSize: data.pageSize, pageToken: data.pageToken },
    );
    return { message: 'Documents retrieved successfully.', data: page.documents, pageToken: page.pageToken };
  },
});
