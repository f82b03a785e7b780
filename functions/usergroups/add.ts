import { addGroups } from '../../shared/domain/user-groups';
import { operation } from '../../shared/http/operation';
import { clientId, nonEmptyText, nonEmptyUniqueListOf } from '../../shared/http/schemas';
import * as z from 'zod/mini';

const group = z.object({ groupId: clientId(), groupName: nonEmptyText(200) });

export const schema = z.object({
  organizationId: clientId(),
  createOrganization: z.optional(z.boolean()),
  organizationUserGroups: nonEmptyUniqueListOf(group, (item) => item.groupId, 'a groupId'),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const { organizationId, createOrganization = false, organizationUserGroups } = data;
    const results = await addGroups(caller.apiKeyId, organizationId, organizationUserGroups, createOrganization);
    return { message: 'User groups added.', data: results };
  },
});
