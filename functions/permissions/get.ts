import { activePermissions } from '../../shared/domain/permissions';
import { operation } from '../../shared/http/operation';
import { clientId } from '../../shared/http/schemas';
import * as z from 'zod/mini';

export const schema = z.object({
  userId: clientId(),
  organizationId: z.optional(clientId()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const permissions = await activePermissions(caller.apiKeyId, data.userId, data.organizationId);
    return { message: 'Permissions retrieved successfully.', data: permissions };
  },
});
