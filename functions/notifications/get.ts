import * as z from 'zod/mini';
import { listNotifications } from '../../shared/domain/notifications';
import { operation } from '../../shared/http/operation';
import { clientObject, pageWithPageToken } from '../../shared/http/results';
import { clientId, listOf, pageSize, pageToken, userReference } from '../../shared/http/schemas';

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

/** A notification as presentNotification shows it (docs/decisions.md §6); users as Add Notification stored them. */
const notification = z.object({
  id: z.string(),
  notificationSource: z.optional(z.string()),
  notificationSourceData: z.optional(clientObject()),
  actionUser: userReference(),
  displayHeadlineMessageTemplate: z.string(),
  displayHeadlineMessageTemplateData: z.optional(clientObject()),
  displayBodyMessage: z.optional(z.string()),
  notifyUsers: z.array(userReference()),
  readByUserIds: z.array(z.string()),
  metadata: z.object({
    apiKey: z.string(),
    organizationId: z.string(),
    documentId: z.string(),
    locationId: z.optional(z.string()),
  }),
  timestamp: z.int(),
});

export const result = pageWithPageToken(notification);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listNotifications(caller.apiKeyId, data);
    return { message: 'Notifications retrieved successfully.', data: page.notifications, pageToken: page.pageToken };
  },
});
