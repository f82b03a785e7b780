import * as z from 'zod/mini';
import { MAX_QUERY_LENGTH, suggestDecision } from '../../shared/domain/suggestions';
import { operation } from '../../shared/http/operation';
import { clientId, trimmedNonEmptyText } from '../../shared/http/schemas';

export const schema = z
  .object({
    query: trimmedNonEmptyText(MAX_QUERY_LENGTH),
    organizationId: z.optional(clientId()),
    documentId: z.optional(clientId()),
  })
  .check(
    z.refine((data) => data.documentId === undefined || data.organizationId !== undefined, {
      message: 'Requires organizationId.',
      path: ['documentId'],
    }),
  );

const suggestion = z.object({
  recommendation: z.enum(['approve', 'reject']),
  confidence: z.number(),
  basedOn: z.number(),
  scope: z.enum(['document', 'organization', 'apiKey']),
  scopeLabel: z.string(),
  topReasons: z.array(z.string()),
  uniqueReviewers: z.number(),
  caveats: z.array(z.string()),
});

/** Suggest Decision's own result shape (docs/decisions.md §1), for the OpenAPI document; the handler's return is checked against it. */
export const resultSchema = z.object({ primary: z.nullable(suggestion), conflict: z.nullable(suggestion) });

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const result: z.output<typeof resultSchema> = await suggestDecision(caller.apiKeyId, data);
    return { result };
  },
});
