import { listOrganizationDocuments } from '../../shared/domain/documents';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { clientId, listOf, pageSize, pageToken } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentIds: z.optional(listOf(clientId())),
  folderId: z.optional(clientId()),
  pageSize: pageSize(1000),
  pageToken: z.optional(pageToken()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const page = await listOrganizationDocuments(
      caller.apiKeyId,
      { organizationId: data.organizationId, folderId: data.folderId, documentIds: data.documentIds },
      { pageSize: data.pageSize, pageToken: data.pageToken },
    );
    return { message: 'Documents retrieved successfully.', data: page.documents, pageToken: page.pageToken };
  },
});
