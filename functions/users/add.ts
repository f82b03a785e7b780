import * as z from 'zod/mini';
import { addUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { levelFields, nonEmptyUniqueListOf, notBothDocumentAndFolder, userInput } from '../../shared/http/schemas';

export const schema = z
  .object({
    ...levelFields,
    createOrganization: z.optional(z.boolean()),
    createDocument: z.optional(z.boolean()),
    createFolder: z.optional(z.boolean()),
    users: nonEmptyUniqueListOf(userInput(), (user) => user.userId, 'a userId'),
  })
  .check(notBothDocumentAndFolder());

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Users added successfully.', data: await addUsers(caller.apiKeyId, data) }),
});
