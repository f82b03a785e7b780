import * as z from 'zod/mini';
import { setNotificationConfig } from '../../shared/domain/notification-config';
import { operation } from '../../shared/http/operation';
import { clientId, nonEmptyUniqueIds } from '../../shared/http/schemas';

const configLevel = () => z.enum(['ALL', 'MINE', 'NONE']);

export const schema = z.object({
  organizationId: clientId(),
  userIds: nonEmptyUniqueIds('a user id'),
  documentIds: z.optional(nonEmptyUniqueIds('a document id', 30)),
  config: z
    .object({ inbox: z.optional(configLevel()), email: z.optional(configLevel()) })
    .check(z.refine((config) => config.inbox !== undefined || config.email !== undefined, 'Must set inbox or email.')),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({ message: 'Notification config set successfully.', data: await setNotificationConfig(caller.apiKeyId, data) }),
});
