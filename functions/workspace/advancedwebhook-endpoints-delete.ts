import * as z from 'zod/mini';
import { deleteEndpoint } from '../../shared/domain/webhooks/endpoints';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({ endpointId: clientId() });

export const result = answer(z.object({ endpointId: z.string(), deleted: z.literal(true) }));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook endpoint deleted successfully.',
    data: await deleteEndpoint(caller.apiKeyId, data.endpointId),
  }),
});
