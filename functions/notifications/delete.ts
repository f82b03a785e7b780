import * as z from 'zod/mini';
import { deleteNotifications } from '../../shared/domain/notifications';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, nonEmptyUniqueIds } from '../../shared/http/schemas';

export const schema = z
  .object({
    organizationId: clientId(),
    documentId: z.optional(clientId()),
    locationId: z.optional(clientId()),
    userId: z.optional(clientId()),
    notificationIds: z.optional(nonEmptyUniqueIds('a notification id')),
  })
  .check(
    // No accidental wipe (docs/decisions.md §6): an organization alone selects nothing.
    z.refine((data) => [data.documentId, data.locationId, data.userId, data.notificationIds].some((f) => f !== undefined), {
      message: 'Give documentId, userId, locationId or notificationIds; deleting every notification of an organization is not allowed.',
      path: ['organizationId'],
    }),
  );

/** Keyed by notification id: deleted, removed from the user's feed, not found, or not written. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({ message: 'Notifications deleted successfully.', data: await deleteNotifications(caller.apiKeyId, data) }),
});
