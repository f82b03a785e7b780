import { accessTypeSchema, documentNameSchema, metadataSchema, updateDocuments } from '../../shared/domain/documents';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { clientId, nonEmptyUniqueListOf } from '../../shared/http/schemas';

const document = z.object({
  documentId: clientId(),
  documentName: z.optional(documentNameSchema()),
  folderId: z.optional(clientId()),
  accessType: z.optional(accessTypeSchema()),
  metadata: z.optional(metadataSchema()),
});

export const schema = z.object({
  organizationId: clientId(),
  documents: nonEmptyUniqueListOf(document, (item) => item.documentId, 'a documentId'),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const result = await updateDocuments(caller.apiKeyId, data.organizationId, data.documents);
    return { message: 'Documents updated successfully.', data: result };
  },
});
