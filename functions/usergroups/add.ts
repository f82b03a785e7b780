import { addGroups } from '../../shared/domain/user-groups';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, nonEmptyText, nonEmptyUniqueListOf } from '../../shared/http/schemas';
import * as z from 'zod/mini';

const group = z.object({ groupId: clientId(), groupName: nonEmptyText(200) });

export const schema = z.object({
  organizationId: clientId(),
  createOrganization: z.optional(z.boolean()),
  organizationUserGroups: nonEmptyUniqueListOf(group, 'groupId', 'a groupId'),
});

/** Keyed by groupId; `id` is the group's id, absent on an item not written. */
export const result = batchOf(itemResult({ id: z.optional(z.string()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const { organizationId, createOrganization = false, organizationUserGroups } = data;
    const results = await addGroups(caller.apiKeyId, organizationId, organizationUserGroups, createOrganization);
    return { message: 'User groups added.', data: results };
  },
});
