import { addDocuments } from '../../shared/domain/documents';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import * as z from 'zod/mini';
import { clientId, documentFields, nonEmptyUniqueListOf } from '../../shared/http/schemas';

const document = z.object(documentFields());

export const schema = z.object({
  organizationId: clientId(),
  createOrganization: z.optional(z.boolean()),
  documents: nonEmptyUniqueListOf(document, 'documentId', 'a documentId'),
});

/** Keyed by documentId; `id` is the document's id, absent on an item not written. */
export const result = batchOf(itemResult({ id: z.optional(z.string()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const result = await addDocuments(caller.apiKeyId, data.organizationId, data.documents, {
      createOrganization: data.createOrganization === true,
    });
    return { message: 'Documents added successfully.', data: result };
  },
});
