import * as z from 'zod/mini';
import { setNotificationConfig } from '../../shared/domain/notification-config';
import { configLevel } from '../../shared/http/notification-schemas';
import { operation } from '../../shared/http/operation';
import { clientId, idList } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  userIds: idList('user id'),
  documentIds: z.optional(idList('document id', 30)),
  config: z
    .object({ inbox: z.optional(configLevel()), email: z.optional(configLevel()) })
    .check(z.refine((config) => config.inbox !== undefined || config.email !== undefined, 'Must set inbox or email.')),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Notification config set successfully.', data: await setNotificationConfig(caller.apiKeyId, data) }),
});
