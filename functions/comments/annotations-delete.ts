import * as z from 'zod/mini';
import { deleteAnnotations } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { annotationIds, documentScope } from '../../shared/http/comment-schemas';

export const schema = z.object({ ...documentScope(), annotationIds: annotationIds() });

/** Keyed by annotationId; a thread goes with its comments. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment Annotation(s) deleted successfully.',
    data: await deleteAnnotations(caller.apiKeyId, data),
  }),
});
