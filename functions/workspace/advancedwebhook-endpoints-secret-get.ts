import * as z from 'zod/mini';
import { decryptSecret } from '../../shared/crypto/encryption';
import { readEndpointSecret } from '../../shared/domain/webhooks/endpoints';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';
import { webhookEndpointSecretData } from '../../shared/http/workspace-results';

export const schema = z.object({ endpointId: clientId() });

export const result = answer(webhookEndpointSecretData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook endpoint secret retrieved successfully.',
    data: await readEndpointSecret(caller.apiKeyId, data.endpointId, decryptSecret),
  }),
});
