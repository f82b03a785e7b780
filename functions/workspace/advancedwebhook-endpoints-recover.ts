import * as z from 'zod/mini';
import { deliveryQueue } from '../../shared/adapters/queue/delivery-queue';
import { recoverEndpoint } from '../../shared/domain/webhooks/messages';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { nonEmptyText } from '../../shared/http/schemas';

const time = () => z.int().check(z.nonnegative('Must be a time in milliseconds.'));

export const schema = z.object({
  endpointId: nonEmptyText(100),
  since: time(),
  until: z.optional(time()),
});

export const result = answer(z.object({ endpointId: z.string(), recovered: z.int() }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Failed messages of the endpoint queued for delivery again.',
    data: await recoverEndpoint(caller.apiKeyId, data, deliveryQueue()),
  }),
});
