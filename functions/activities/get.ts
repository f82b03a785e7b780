import * as z from 'zod/mini';
import { FEATURE_TYPES, listActivities } from '../../shared/domain/activities';
import { operation } from '../../shared/http/operation';
import { clientObject, pageWithPageToken } from '../../shared/http/results';
import { clientId, nonEmptyListOf, nonEmptyText, pageSize, pageToken, userReference } from '../../shared/http/schemas';

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

/**
 * A record as presentActivity shows it: the fields the client sent (docs/api-spec.md "Activity record"; entityData
 * and entityTargetData any JSON value), then metadata and the server timestamp.
 */
const activity = z.object({
  id: z.string(),
  featureType: z.enum(FEATURE_TYPES),
  actionType: z.string(),
  actionUser: z.optional(userReference()),
  targetEntityId: z.optional(z.string()),
  targetSubEntityId: z.optional(z.string()),
  changes: z.optional(clientObject()),
  entityData: z.optional(z.unknown()),
  entityTargetData: z.optional(z.unknown()),
  displayMessageTemplate: z.optional(z.string()),
  displayMessageTemplateData: z.optional(clientObject()),
  actionIcon: z.optional(z.string()),
  isActivityResolverUsed: z.optional(z.boolean()),
  metadata: z.object({ apiKey: z.string(), organizationId: z.string(), documentId: z.optional(z.string()) }),
  timestamp: z.int(),
});

export const result = pageWithPageToken(activity);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listActivities(caller.apiKeyId, data);
    return { message: 'Activities retrieved successfully.', data: page.activities, pageToken: page.pageToken };
  },
});
