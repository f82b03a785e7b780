import * as z from 'zod/mini';
import { updateNotifications } from '../../shared/domain/notifications';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, listOf, nonEmptyUniqueListOf, notificationContent } from '../../shared/http/schemas';

const notification = z.object({
  ...notificationContent(),
  id: clientId(),
  readByUserIds: z.optional(listOf(clientId())),
  persistReadForUsers: z.optional(z.boolean()),
});

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  locationId: z.optional(clientId()),
  userId: z.optional(clientId()),
  verifyUserPermissions: z.optional(z.boolean()),
  // The contract shows an object; its examples send an array: both are accepted.
  notifications: z.union([notification, nonEmptyUniqueListOf(notification, 'id', 'a notification id')]),
});

/** Keyed by notification id: updated, not found, or not written. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const notifications = Array.isArray(data.notifications) ? data.notifications : [data.notifications];
    return {
      message: 'Notifications updated successfully.',
      data: await updateNotifications(caller.apiKeyId, { ...data, notifications }),
    };
  },
});
