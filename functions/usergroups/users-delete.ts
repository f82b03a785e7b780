import { removeGroupMembers } from '../../shared/domain/user-groups';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, documentedRules, nonEmptyUniqueIds, requires } from '../../shared/http/schemas';
import * as z from 'zod/mini';

export const schema = documentedRules(
  z
    .object({
      organizationId: clientId(),
      organizationUserGroupId: clientId(),
      userIds: z.optional(nonEmptyUniqueIds('a userId')),
      deleteAll: z.optional(z.boolean()),
    })
    .check(
      // docs/decisions.md §4: exactly one of the two, so a request can never mean both "these users" and "everyone".
      z.refine(
        (value) => (value.userIds !== undefined) !== (value.deleteAll === true),
        'Give either userIds or deleteAll: true, not both and not neither.',
      ),
    ),
  {
    anyOf: [
      { properties: { deleteAll: { const: false } }, required: ['userIds'] },
      { properties: { deleteAll: { const: true } }, required: ['deleteAll'], not: requires('userIds') },
    ],
  },
);

/** Keyed by userId; `organizationUserGroupId` absent on an item not written. */
export const result = batchOf(itemResult({ organizationUserGroupId: z.optional(z.string()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const members = data.userIds === undefined ? { all: true as const } : { userIds: data.userIds };
    const results = await removeGroupMembers(
      caller.apiKeyId,
      data.organizationId,
      data.organizationUserGroupId,
      members,
    );
    return { message: 'Users removed from group.', data: results };
  },
});
