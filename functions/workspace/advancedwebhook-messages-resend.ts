import * as z from 'zod/mini';
import { deliveryQueue } from '../../shared/adapters/queue/delivery-queue';
import { resendMessage } from '../../shared/domain/webhooks/messages';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { nonEmptyText } from '../../shared/http/schemas';

export const schema = z.object({
  messageId: nonEmptyText(100),
  endpointId: nonEmptyText(100),
});

export const result = answer(z.object({ messageId: z.string(), endpointId: z.string(), status: z.literal('pending') }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook message queued for delivery.',
    data: await resendMessage(caller.apiKeyId, data, deliveryQueue()),
  }),
});
