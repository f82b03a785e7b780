import { removePermissions } from '../../shared/domain/permissions';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, documentedRules, nonEmptyUniqueListOf, RESOURCE_ORGANIZATION_RULE } from '../../shared/http/schemas';
import * as z from 'zod/mini';

const resource = documentedRules(
  z.object({
    type: z.enum(['organization', 'document', 'folder']),
    id: clientId(),
    organizationId: z.optional(clientId()),
  }),
  RESOURCE_ORGANIZATION_RULE,
);

export const schema = z.object({
  userId: clientId(),
  permissions: z.object({
    // The result is keyed by resource id, so one id may appear only once per request.
    resources: nonEmptyUniqueListOf(resource, 'id', 'a resource id'),
  }),
});

/** Keyed by resource id. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const results = await removePermissions(caller.apiKeyId, data.userId, data.permissions.resources);
    return { message: 'Permissions removed.', data: results };
  },
});
