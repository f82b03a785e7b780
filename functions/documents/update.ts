import { updateDocuments } from '../../shared/domain/documents';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import * as z from 'zod/mini';
import {
  clientId,
  clientRecord,
  documentFields,
  documentedRules,
  maybeEmptyText,
  nonEmptyText,
  nonEmptyUniqueListOf,
} from '../../shared/http/schemas';

const MAX_METADATA_ENTRIES = 50;

/**
 * Document metadata: string values; bounded so that 50 entries of 4-byte characters stay far below 400 KB. Given
 * to Update, it replaces the stored map as a whole.
 */
const metadata = documentedRules(
  clientRecord(nonEmptyText(128), maybeEmptyText(1000)).check(
    z.refine(
      (value) => Object.keys(value).length <= MAX_METADATA_ENTRIES,
      `Must have at most ${MAX_METADATA_ENTRIES} entries.`,
    ),
  ),
  // clientRecord is a custom schema, which the document would show as an unconstrained value: its rules are stated.
  {
    type: 'object',
    maxProperties: MAX_METADATA_ENTRIES,
    propertyNames: { minLength: 1, maxLength: 128 },
    additionalProperties: { type: 'string', maxLength: 1000 },
  },
);

const document = z.object({
  ...documentFields(),
  metadata: z.optional(metadata),
});

export const schema = z.object({
  organizationId: clientId(),
  documents: nonEmptyUniqueListOf(document, 'documentId', 'a documentId'),
});

/** Keyed by documentId; `id` is the document's id, absent on an item not written. */
export const result = batchOf(itemResult({ id: z.optional(z.string()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const result = await updateDocuments(caller.apiKeyId, data.organizationId, data.documents);
    return { message: 'Documents updated successfully.', data: result };
  },
});
