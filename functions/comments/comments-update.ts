import * as z from 'zod/mini';
import { updateComments } from '../../shared/domain/comments/annotations';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { atLeastOneOf, maybeEmptyText } from '../../shared/http/schemas';
import {
  MAX_COMMENT_CHARACTERS,
  annotationId,
  commentIds,
  context,
  documentScope,
  taggedUserContacts,
} from '../../shared/http/comment-schemas';

const UPDATABLE = ['commentText', 'commentHtml', 'taggedUserContacts', 'context'] as const;

export const schema = z.object({
  ...documentScope(),
  annotationId: annotationId(),
  commentIds: commentIds(),
  updatedData: atLeastOneOf(
    z.object({
      commentText: z.optional(maybeEmptyText(MAX_COMMENT_CHARACTERS)),
      commentHtml: z.optional(maybeEmptyText(MAX_COMMENT_CHARACTERS)),
      taggedUserContacts: z.optional(taggedUserContacts()),
      context: z.optional(context()),
    }),
    UPDATABLE,
    `At least one of ${UPDATABLE.join(', ')} must be given.`,
  ),
});

/** Keyed by commentId. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Comment(s) updated successfully.',
    data: await updateComments(caller.apiKeyId, data),
  }),
});
