import * as z from 'zod/mini';
import { listAttempts } from '../../shared/domain/webhooks/messages';
import { operation } from '../../shared/http/operation';
import { pageWithPageToken } from '../../shared/http/results';
import { atLeastOneOf, nonEmptyText, pageSize, pageToken } from '../../shared/http/schemas';
import { webhookAttempt } from '../../shared/http/webhook-results';

export const schema = atLeastOneOf(
  z.object({
    messageId: z.optional(nonEmptyText(100)),
    endpointId: z.optional(nonEmptyText(100)),
    pageSize: pageSize(250, 50),
    pageToken: z.optional(pageToken()),
  }),
  ['messageId', 'endpointId'],
  'Provide messageId, endpointId or both.',
);

export const result = pageWithPageToken(webhookAttempt());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listAttempts(caller.apiKeyId, data);
    return {
      message: 'Advanced webhook attempts retrieved successfully.',
      data: page.attempts,
      pageToken: page.pageToken,
    };
  },
});
