import * as z from 'zod/mini';
import { deleteUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { documentOrFolder, idList, levelFields } from '../../shared/http/schemas';

export const schema = z
  .object({
    ...levelFields,
    userIds: idList('user id'),
  })
  .check(documentOrFolder());

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Users deleted successfully.', data: await deleteUsers(caller.apiKeyId, data) }),
});
