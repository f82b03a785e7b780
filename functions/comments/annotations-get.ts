import * as z from 'zod/mini';
import { listAnnotations } from '../../shared/domain/comments/listing';
import { operation } from '../../shared/http/operation';
import { pageWithNextPageToken } from '../../shared/http/results';
import { clientId, pageSize, pageToken, uniqueIds } from '../../shared/http/schemas';
import { annotationIds, annotationResult, filterIds } from '../../shared/http/comment-schemas';

const time = () => z.optional(z.int().check(z.nonnegative('Must be a time in milliseconds.')));

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  documentIds: z.optional(uniqueIds('a documentId', { min: 1, max: 30 })),
  annotationIds: z.optional(annotationIds()),
  userIds: z.optional(filterIds('a userId')),
  mentionedUserIds: z.optional(filterIds('a userId')),
  statusIds: z.optional(filterIds('a statusId')),
  locationIds: z.optional(filterIds('a locationId')),
  createdAfter: time(),
  createdBefore: time(),
  updatedAfter: time(),
  updatedBefore: time(),
  pageSize: pageSize(1000, 100),
  pageToken: z.optional(pageToken()),
  viewerUserId: z.optional(clientId()),
});

/** Threads newest lastUpdated first, each with its comments oldest first (decisions §16). */
export const result = pageWithNextPageToken(annotationResult());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listAnnotations(caller.apiKeyId, data);
    return {
      message: 'Comment Annotations retrieved successfully.',
      data: page.annotations,
      nextPageToken: page.nextPageToken,
    };
  },
});
