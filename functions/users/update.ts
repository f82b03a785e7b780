import * as z from 'zod/mini';
import { updateUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import {
  NOT_BOTH_DOCUMENT_AND_FOLDER,
  documentedRules,
  levelFields,
  nonEmptyUniqueListOf,
  notBothDocumentAndFolder,
  userInput,
} from '../../shared/http/schemas';

export const schema = documentedRules(
  z
    .object({
      ...levelFields,
      users: nonEmptyUniqueListOf(userInput(), 'userId', 'a userId'),
    })
    .check(notBothDocumentAndFolder()),
  NOT_BOTH_DOCUMENT_AND_FOLDER,
);

/** Keyed by userId; `id` is the user's stable id in the tenant, absent on an item not written. */
export const result = batchOf(itemResult({ id: z.optional(z.string()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Users updated successfully.',
    data: await updateUsers(caller.apiKeyId, data),
  }),
});
