import * as z from 'zod/mini';
import { countAnnotations } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId, uniqueIds } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentIds: uniqueIds('a documentId', { min: 1, max: 30 }),
  userId: z.optional(clientId()),
});

/** `{<documentId>: {total, unread}}`; `unread` only with `userId` (decisions §16). */
export const result = answer(z.record(z.string(), z.object({ total: z.number(), unread: z.optional(z.number()) })));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment Annotations counted successfully.',
    data: await countAnnotations(caller.apiKeyId, data),
  }),
});
