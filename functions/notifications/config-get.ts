import * as z from 'zod/mini';
import { readNotificationConfig } from '../../shared/domain/notification-config';
import { operation } from '../../shared/http/operation';
import { clientId, listOf, noDuplicateIds } from '../../shared/http/schemas';

export const schema = z
  .object({
    organizationId: clientId(),
    userId: clientId(),
    documentIds: z.optional(listOf(clientId(), 30).check(noDuplicateIds((id: string) => id, 'a document id'))),
    getOrganizationConfig: z.optional(z.boolean()),
  })
  .check(
    z.refine((data) => (data.documentIds?.length ?? 0) > 0 || data.getOrganizationConfig === true, {
      message: 'Give documentIds, or getOrganizationConfig: true.',
      path: ['documentIds'],
    }),
  );

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({
    message: 'Notification config retrieved successfully.',
    data: await readNotificationConfig(caller.apiKeyId, data),
  }),
});
