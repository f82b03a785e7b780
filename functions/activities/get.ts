import * as z from 'zod/mini';
import { FEATURE_TYPES, listActivities } from '../../shared/domain/activities';
import { operation } from '../../shared/http/operation';
import { boundedArray, boundedText, clientId, pageSize, pageToken } from '../../shared/http/schemas';

/** A filter list: 1 to 100 values (an empty list would match nothing, which is never what a caller means). */
const filterList = <T extends z.core.SomeType>(item: T) => boundedArray(item).check(z.minLength(1, 'Must not be empty.'));

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  targetEntityId: z.optional(clientId()),
  featureTypes: z.optional(filterList(z.enum(FEATURE_TYPES))),
  actionTypes: z.optional(filterList(boundedText(200))),
  userId: z.optional(clientId()),
  activityIds: z.optional(filterList(clientId())),
  order: z.optional(z.enum(['asc', 'desc'])),
  pageSize: z.optional(pageSize()),
  pageToken: z.optional(pageToken()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const page = await listActivities(caller.apiKeyId, { ...data, pageSize: data.pageSize ?? 1000 });
    return { message: 'Activities retrieved successfully.', data: page.activities, pageToken: page.pageToken };
  },
});
