import * as z from 'zod/mini';
import { listNotifications } from '../../shared/domain/notifications';
import { operation } from '../../shared/http/operation';
import { clientId, listOf, pageSize, pageToken } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  userId: z.optional(clientId()),
  locationId: z.optional(clientId()),
  notificationIds: z.optional(listOf(clientId(), 30)),
  order: z.optional(z.enum(['asc', 'desc'])),
  pageSize: pageSize(),
  pageToken: z.optional(pageToken()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const page = await listNotifications(caller.apiKeyId, data);
    return { message: 'Notifications retrieved successfully.', data: page.notifications, pageToken: page.pageToken };
  },
});
