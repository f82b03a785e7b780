import * as z from 'zod/mini';
import { MAX_QUERY_LENGTH, suggestDecision } from '../../shared/domain/suggestions';
import { operation } from '../../shared/http/operation';
import { ownResult } from '../../shared/http/results';
import { clientId, documentedRules, trimmedNonEmptyText } from '../../shared/http/schemas';

export const schema = documentedRules(
  z
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
    ),
  { dependentRequired: { documentId: ['organizationId'] } },
);

const suggestion = z.object({
  recommendation: z.enum(['approve', 'reject']),
  confidence: z.number().check(z.minimum(0), z.maximum(1)),
  basedOn: z.int().check(z.positive()),
  scope: z.enum(['document', 'organization', 'apiKey']),
  scopeLabel: z.string(),
  topReasons: z.array(z.string()).check(z.maxLength(3)),
  uniqueReviewers: z.int().check(z.positive()),
  caveats: z.array(z.string()),
});

/** Its own result, not the success envelope (docs/api-spec.md "Suggest Decision"): each suggestion or null. */
export const result = ownResult(z.object({ primary: z.nullable(suggestion), conflict: z.nullable(suggestion) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({ result: await suggestDecision(caller.apiKeyId, data) }),
});
