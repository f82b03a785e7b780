import { removePermissions } from '../../shared/domain/permissions';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, nonEmptyUniqueListOf } from '../../shared/http/schemas';
import * as z from 'zod/mini';

const resource = z.object({
  type: z.enum(['organization', 'document', 'folder']),
  id: clientId(),
  organizationId: z.optional(clientId()),
});

export const schema = z.object({
  userId: clientId(),
  permissions: z.object({
    // The result is keyed by resource id, so one id may appear only once per request.
    resources: nonEmptyUniqueListOf(resource, (item) => item.id, 'a resource id'),
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
