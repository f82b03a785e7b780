import * as z from 'zod/mini';
import { updateEndpoint } from '../../shared/domain/webhooks/endpoints';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId, documentedRules, requires, webhookEndpointFields } from '../../shared/http/schemas';
import { webhookEndpointData } from '../../shared/http/workspace-results';

const fields = webhookEndpointFields();

// null clears an optional field; url and disabled always have a value. The domain refuses a request that names
// no field besides endpointId, with the contract's message (docs/decisions.md §11).
export const schema = documentedRules(
  z.object({
    endpointId: clientId(),
    url: z.optional(fields.url),
    description: z.optional(z.nullable(fields.description)),
    filterTypes: z.optional(z.nullable(fields.filterTypes)),
    channels: z.optional(z.nullable(fields.channels)),
    disabled: z.optional(fields.disabled),
    rateLimit: z.optional(z.nullable(fields.rateLimit)),
    metadata: z.optional(z.nullable(fields.metadata)),
  }),
  {
    anyOf: ['url', 'description', 'filterTypes', 'channels', 'disabled', 'rateLimit', 'metadata'].map((field) =>
      requires(field),
    ),
  },
);

export const result = answer(webhookEndpointData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook endpoint updated successfully.',
    data: await updateEndpoint(caller.apiKeyId, data),
  }),
});
