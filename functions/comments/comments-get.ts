import * as z from 'zod/mini';
import { getComments } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { annotationId, commentIds, commentResult, documentScope } from '../../shared/http/comment-schemas';

export const schema = z.object({
  ...documentScope(),
  annotationId: annotationId(),
  commentIds: z.optional(commentIds()),
});

/** The thread's comments, oldest first. */
export const result = answer(z.array(commentResult()));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comments retrieved successfully.',
    data: await getComments(caller.apiKeyId, data),
  }),
});
