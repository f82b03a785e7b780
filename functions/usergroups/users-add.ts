import { addGroupMembers } from '../../shared/domain/user-groups';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, nonEmptyUniqueIds } from '../../shared/http/schemas';
import * as z from 'zod/mini';

export const schema = z.object({
  organizationId: clientId(),
  organizationUserGroupId: clientId(),
  userIds: nonEmptyUniqueIds('a userId'),
});

/** Keyed by userId; `organizationUserGroupId` absent on an item not written. */
export const result = batchOf(itemResult({ organizationUserGroupId: z.optional(z.string()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const results = await addGroupMembers(
      caller.apiKeyId,
      data.organizationId,
      data.organizationUserGroupId,
      data.userIds,
    );
    return { message: 'Users added to group.', data: results };
  },
});
