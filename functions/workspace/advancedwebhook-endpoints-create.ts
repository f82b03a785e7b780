import * as z from 'zod/mini';
import { encryptSecret } from '../../shared/crypto/encryption';
import { createEndpoint } from '../../shared/domain/webhooks/endpoints';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { webhookEndpointFields } from '../../shared/http/schemas';
import { webhookEndpointData } from '../../shared/http/workspace-results';

const fields = webhookEndpointFields();

// A `secret` in the request is stripped like any unknown field: the server makes every signing secret.
export const schema = z.object({
  url: fields.url,
  description: z.optional(fields.description),
  filterTypes: z.optional(fields.filterTypes),
  channels: z.optional(fields.channels),
  disabled: z.optional(fields.disabled),
  rateLimit: z.optional(fields.rateLimit),
  uid: z.optional(
    z
      .string()
      .check(
        z.minLength(1, 'Must not be empty.'),
        z.maxLength(256, 'Must be at most 256 characters.'),
        z.regex(/^[a-zA-Z0-9\-_.]+$/, 'Must contain only letters, digits, -, _ and .'),
      ),
  ),
  metadata: z.optional(fields.metadata),
});

export const result = answer(webhookEndpointData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook endpoint created successfully.',
    data: await createEndpoint(caller.apiKeyId, data, encryptSecret),
  }),
});
