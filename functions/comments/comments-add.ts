import * as z from 'zod/mini';
import { addComments } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { annotationId, commentData, documentScope } from '../../shared/http/comment-schemas';

export const schema = z.object({ ...documentScope(), annotationId: annotationId(), commentData: commentData() });

/** The ids of the comments added, in the order given. */
export const result = answer(z.array(z.number()));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment(s) added successfully.',
    data: await addComments(caller.apiKeyId, data),
  }),
});
