import * as z from 'zod/mini';
import { deleteUsers } from '../../shared/domain/users';
import { operation } from '../../shared/http/operation';
import { levelFields, nonEmptyUniqueIds, notBothDocumentAndFolder } from '../../shared/http/schemas';

export const schema = z
  .object({
    ...levelFields,
    userIds: nonEmptyUniqueIds('a user id'),
  })
  .check(notBothDocumentAndFolder());

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Users deleted successfully.', data: await deleteUsers(caller.apiKeyId, data) }),
});
