import * as z from 'zod/mini';
import { addUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { batchOf, documentOrFolder, levelFields, userInput } from '../../shared/http/schemas';

export const schema = z
  .object({
    ...levelFields,
    createOrganization: z.optional(z.boolean()),
    createDocument: z.optional(z.boolean()),
    createFolder: z.optional(z.boolean()),
    users: batchOf(userInput(), (user) => user.userId, 'userId'),
  })
  .check(documentOrFolder());

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Users added successfully.', data: await addUsers(caller.apiKeyId, data) }),
});
