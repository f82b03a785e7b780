import * as z from 'zod/mini';
import { addNotification } from '../../shared/domain/notifications';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import {
  clientId,
  eventType,
  maybeEmptyText,
  notificationContent,
  uniqueListOf,
  userReference,
} from '../../shared/http/schemas';

export const schema = z.object({
  ...notificationContent(),
  organizationId: clientId(),
  documentId: clientId(),
  createOrganization: z.optional(z.boolean()),
  createDocument: z.optional(z.boolean()),
  locationId: z.optional(clientId()),
  notificationId: z.optional(clientId()),
  actionUser: userReference(),
  displayHeadlineMessageTemplate: maybeEmptyText(5000),
  notificationSource: z.optional(maybeEmptyText(200)),
  notifyUsers: z.optional(uniqueListOf(userReference(), 'userId', 'a userId')),
  notifyAll: z.optional(z.boolean()),
  verifyUserPermissions: z.optional(z.boolean()),
  /** (ext) What the notification is about (`comment.add`): its email trigger decides whether it is emailed (docs/decisions.md §12). */
  eventType: z.optional(eventType()),
});

/** The id of the notification added (or updated, when `notificationId` named an existing one). */
export const result = answer(z.object({ notificationId: z.string() }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Notification added successfully.',
    data: { notificationId: await addNotification(caller.apiKeyId, data) },
  }),
});
