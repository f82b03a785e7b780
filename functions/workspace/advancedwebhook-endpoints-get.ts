import * as z from 'zod/mini';
import { TIME_ORDERED_ID_BODY } from '../../shared/core/ids';
import { ENDPOINT_ID_PREFIX, listEndpoints } from '../../shared/domain/webhooks/endpoints';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { pageSize } from '../../shared/http/schemas';
import { webhookEndpointData } from '../../shared/http/workspace-results';

export const schema = z.object({
  limit: pageSize(250, 50),
  // The `iterator` or `prevIterator` of a page: an endpoint id, or `-` and one.
  iterator: z.optional(
    z
      .string()
      .check(
        z.regex(
          new RegExp(`^-?${ENDPOINT_ID_PREFIX}${TIME_ORDERED_ID_BODY}$`),
          'Must be an iterator or prevIterator of a page.',
        ),
      ),
  ),
});

export const result = answer(
  z.object({
    endpoints: z.array(webhookEndpointData()),
    iterator: z.nullable(z.string()),
    prevIterator: z.nullable(z.string()),
    done: z.boolean(),
  }),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook endpoints retrieved successfully.',
    data: await listEndpoints(caller.apiKeyId, data),
  }),
});
