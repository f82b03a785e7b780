import * as z from 'zod/mini';
import { updateUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { levelFields, nonEmptyUniqueListOf, notBothDocumentAndFolder, userInput } from '../../shared/http/schemas';

export const schema = z
  .object({
    ...levelFields,
    users: nonEmptyUniqueListOf(userInput(), (user) => user.userId, 'a userId'),
  })
  .check(notBothDocumentAndFolder());

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Users updated successfully.', data: await updateUsers(caller.apiKeyId, data) }),
});
