import * as z from 'zod/mini';
import { updateUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { batchOf, documentOrFolder, levelFields, userInput } from '../../shared/http/schemas';

export const schema = z
  .object({
    ...levelFields,
    users: batchOf(userInput(), (user) => user.userId, 'userId'),
  })
  .check(documentOrFolder());

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Users updated successfully.', data: await updateUsers(caller.apiKeyId, data) }),
});
