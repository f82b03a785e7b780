import * as z from 'zod/mini';
import { deleteNotifications } from '../../shared/domain/notifications';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { atLeastOneOf, clientId, nonEmptyUniqueIds } from '../../shared/http/schemas';

// No accidental wipe (docs/decisions.md §6): an organization alone selects nothing.
export const schema = atLeastOneOf(
  z.object({
    organizationId: clientId(),
    documentId: z.optional(clientId()),
    locationId: z.optional(clientId()),
    userId: z.optional(clientId()),
    notificationIds: z.optional(nonEmptyUniqueIds('a notification id')),
  }),
  ['documentId', 'locationId', 'userId', 'notificationIds'],
  'Give documentId, userId, locationId or notificationIds; deleting every notification of an organization is not allowed.',
  ['organizationId'],
);

/** Keyed by notification id: deleted, removed from the user's feed, not found, or not written. */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Notifications deleted successfully.',
    data: await deleteNotifications(caller.apiKeyId, data),
  }),
});
