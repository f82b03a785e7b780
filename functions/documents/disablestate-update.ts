/** Serves both /v1 and /v2 `organizations/documents/access/disablestate/update` (docs/decisions.md §5). */
import { setDocumentsDisabled } from '../../shared/domain/documents';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import * as z from 'zod/mini';
import { clientId, nonEmptyUniqueIds } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentIds: nonEmptyUniqueIds('a documentId'),
  disabled: z.boolean(),
});

/** Keyed by documentId; `disabled` (the state set) only on a success. */
export const result = batchOf(itemResult({ disabled: z.optional(z.boolean()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const result = await setDocumentsDisabled(caller.apiKeyId, data.organizationId, data.documentIds, data.disabled);
    return { message: 'Document disabled state updated successfully.', data: result };
  },
});
