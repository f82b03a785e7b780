import * as z from 'zod/mini';
import { listMessages } from '../../shared/domain/webhooks/messages';
import { operation } from '../../shared/http/operation';
import { pageWithPageToken } from '../../shared/http/results';
import { clientId, nonEmptyListOf, nonEmptyText, pageSize, pageToken } from '../../shared/http/schemas';
import { webhookMessage } from '../../shared/http/webhook-results';

export const schema = z.object({
  endpointId: z.optional(nonEmptyText(100)),
  eventTypes: z.optional(nonEmptyListOf(nonEmptyText(100), 50)),
  organizationId: z.optional(clientId()),
  since: z.optional(z.int().check(z.nonnegative('Must be a time in milliseconds.'))),
  pageSize: pageSize(250, 50),
  pageToken: z.optional(pageToken()),
});

export const result = pageWithPageToken(webhookMessage());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listMessages(caller.apiKeyId, data);
    return {
      message: 'Advanced webhook messages retrieved successfully.',
      data: page.messages,
      pageToken: page.pageToken,
    };
  },
});
