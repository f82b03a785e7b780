import * as z from 'zod/mini';
import { addUsers } from '../../shared/domain/users';
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
      createOrganization: z.optional(z.boolean()),
      createDocument: z.optional(z.boolean()),
      createFolder: z.optional(z.boolean()),
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
    message: 'Users added successfully.',
    data: await addUsers(caller.apiKeyId, data),
  }),
});
