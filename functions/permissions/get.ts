import { activePermissions } from '../../shared/domain/permissions';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { accessRole, clientId } from '../../shared/http/schemas';
import * as z from 'zod/mini';

export const schema = z.object({
  userId: clientId(),
  organizationId: z.optional(clientId()),
});

/** The active grants (docs/decisions.md §10); `organizationId` is always given, for an organization its own id. */
export const result = answer(
  z.array(
    z.object({
      type: z.enum(['organization', 'document', 'folder']),
      id: z.string(),
      organizationId: z.string(),
      accessRole: accessRole(),
      expiresAt: z.optional(z.int()),
    }),
  ),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const permissions = await activePermissions(caller.apiKeyId, data.userId, data.organizationId);
    return { message: 'Permissions retrieved successfully.', data: permissions };
  },
});
