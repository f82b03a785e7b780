import * as z from 'zod/mini';
import { addAnnotations } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { uniqueListOf, userReference } from '../../shared/http/schemas';
import { anchor, annotationId, commentData, documentScope, threadFields } from '../../shared/http/comment-schemas';

/** A thread as Add Comment Annotations accepts it: its fields and its first comments (`commentData`). */
const annotation = z.object({
  annotationId: z.optional(annotationId()),
  from: z.optional(userReference()),
  ...threadFields(),
  anchor: z.optional(anchor()),
  commentData: commentData(),
});

export const schema = z.object({
  ...documentScope(),
  commentAnnotations: uniqueListOf(annotation, 'annotationId', 'an annotationId', { min: 1, max: 50 }),
  verifyUserPermissions: z.optional(z.boolean()),
  createOrganization: z.optional(z.boolean()),
  createDocument: z.optional(z.boolean()),
});

/** Keyed by annotationId (decisions §16). */
export const result = batchOf(
  itemResult({ annotationId: z.optional(z.string()), commentIds: z.optional(z.array(z.number())) }),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment Annotation(s) added successfully.',
    data: await addAnnotations(caller.apiKeyId, data),
  }),
});
