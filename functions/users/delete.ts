import * as z from 'zod/mini';
import { deleteUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { boundedArray, clientId, documentOrFolder, levelFields, noDuplicateIds } from '../../shared/http/schemas';

export const schema = z
  .object({
    ...levelFields,
    userIds: boundedArray(clientId()).check(
      z.minLength(1, 'Must have at least one user id.'),
      noDuplicateIds((userId: string) => userId, 'user id'),
    ),
  })
  .check(documentOrFolder());

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Users deleted successfully.', data: await deleteUsers(caller.apiKeyId, data) }),
});
