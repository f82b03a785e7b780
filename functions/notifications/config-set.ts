import * as z from 'zod/mini';
import { CONFIG_LEVELS, setNotificationConfig } from '../../shared/domain/notification-config';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { atLeastOneOf, clientId, nonEmptyUniqueIds } from '../../shared/http/schemas';

const configLevel = () => z.enum(CONFIG_LEVELS);

export const schema = z.object({
  organizationId: clientId(),
  userIds: nonEmptyUniqueIds('a user id'),
  documentIds: z.optional(nonEmptyUniqueIds('a document id', 30)),
  config: atLeastOneOf(
    z.object({ inbox: z.optional(configLevel()), email: z.optional(configLevel()) }),
    ['inbox', 'email'],
    'Must set inbox or email.',
  ),
});

/** Keyed by user id: `userId` on the users whose settings were written, absent on those not written. */
export const result = batchOf(itemResult({ userId: z.optional(z.string()) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Notification config set successfully.',
    data: await setNotificationConfig(caller.apiKeyId, data),
  }),
});
