import * as z from 'zod/mini';
import { updateAnnotations } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { atLeastOneOf } from '../../shared/http/schemas';
import { anchor, annotationIds, documentScope, threadFields } from '../../shared/http/comment-schemas';

const UPDATABLE = ['status', 'priority', 'assignedTo', 'context', 'location', 'visibility', 'anchor'] as const;

export const schema = z.object({
  ...documentScope(),
  annotationIds: annotationIds(),
  updatedData: atLeastOneOf(
    z.object({ ...threadFields(), anchor: z.optional(z.nullable(anchor())) }),
    UPDATABLE,
    `At least one of ${UPDATABLE.join(', ')} must be given.`,
  ),
});

/** Keyed by annotationId. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment Annotation(s) updated successfully.',
    data: await updateAnnotations(caller.apiKeyId, data),
  }),
});
