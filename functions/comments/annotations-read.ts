import * as z from 'zod/mini';
import { readAnnotations } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';
import { annotationIds, documentScope } from '../../shared/http/comment-schemas';

export const schema = z.object({ ...documentScope(), annotationIds: annotationIds(), userId: clientId() });

/** Keyed by annotationId: every comment of the thread is read by the user now. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment Annotation(s) marked as read successfully.',
    data: await readAnnotations(caller.apiKeyId, data),
  }),
});
