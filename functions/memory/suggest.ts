import * as z from 'zod/mini';
import { MAX_QUERY_LENGTH, suggestDecision } from '../../shared/domain/suggestions';
import { operation } from '../../shared/http/operation';
import { clientId, trimmedText } from '../../shared/http/schemas';

export const schema = z
  .object({
    query: trimmedText(MAX_QUERY_LENGTH),
    organizationId: z.optional(clientId()),
    documentId: z.optional(clientId()),
  })
  .check(
    z.refine((data) => data.documentId === undefined || data.organizationId !== undefined, {
      message: 'Requires organizationId.',
      path: ['documentId'],
    }),
  );

export const handler = operation({
  auth: 'apiKey',
  schema,
  // Suggest Decision has its own shape (decisions §1): {result: {primary, conflict}}.
  handle: async ({ data, caller }) => ({ result: await suggestDecision(caller.apiKeyId, data) }),
});
