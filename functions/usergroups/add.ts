import { addGroups } from '../../shared/domain/user-groups';
import { operation } from '../../shared/http/operation';
import { boundedArray, boundedText, clientId, noDuplicateIds } from '../../shared/http/schemas';
import * as z from 'zod/mini';

const group = z.object({ groupId: clientId(), groupName: boundedText(200) });

export const schema = z.object({
  organizationId: clientId(),
  createOrganization: z.optional(z.boolean()),
  organizationUserGroups: boundedArray(group).check(
    z.minLength(1, 'Must not be empty.'),
    noDuplicateIds((item: z.output<typeof group>) => item.groupId, 'groupId'),
  ),
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
