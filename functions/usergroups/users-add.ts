import { addGroupMembers } from '../../shared/domain/user-groups';
import { operation } from '../../shared/http/operation';
import { clientId, nonEmptyUniqueIds } from '../../shared/http/schemas';
import * as z from 'zod/mini';

export const schema = z.object({
  organizationId: clientId(),
  organizationUserGroupId: clientId(),
  userIds: nonEmptyUniqueIds('a userId'),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const results = await addGroupMembers(caller.apiKeyId, data.organizationId, data.organizationUserGroupId, data.userIds);
    return { message: 'Users added to group.', data: results };
  },
});
