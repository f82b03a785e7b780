import * as z from 'zod/mini';
import { FEATURE_TYPES, listActivities } from '../../shared/domain/activities';
import { operation } from '../../shared/http/operation';
import { clientId, nonEmptyListOf, nonEmptyText, pageSize, pageToken } from '../../shared/http/schemas';


export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  targetEntityId: z.optional(clientId()),
  featureTypes: z.optional(nonEmptyListOf(z.enum(FEATURE_TYPES))),
  actionTypes: z.optional(nonEmptyListOf(nonEmptyText(200))),
  userId: z.optional(clientId()),
  activityIds: z.optional(nonEmptyListOf(clientId())),
  order: z.optional(z.enum(['asc', 'desc'])),
  pageSize: pageSize(),
  pageToken: z.optional(pageToken()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const page = await listActivities(caller.apiKeyId, data);
    return { message: 'Activities retrieved successfully.', data: page.activities, pageToken: page.pageToken };
  },
});
