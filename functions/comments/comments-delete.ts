import * as z from 'zod/mini';
import { deleteComments } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { annotationId, commentIds, documentScope } from '../../shared/http/comment-schemas';

export const schema = z.object({ ...documentScope(), annotationId: annotationId(), commentIds: commentIds() });

/** Keyed by commentId; deleting the thread's last comment deletes the thread. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment(s) deleted successfully.',
    data: await deleteComments(caller.apiKeyId, data),
  }),
});
