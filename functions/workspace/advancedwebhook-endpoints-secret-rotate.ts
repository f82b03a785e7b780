import * as z from 'zod/mini';
import { encryptSecret } from '../../shared/crypto/encryption';
import { rotateEndpointSecret } from '../../shared/domain/webhooks/endpoints';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';
import { webhookEndpointSecretData } from '../../shared/http/workspace-results';

export const schema = z.object({ endpointId: clientId() });

/** The new secret; the one it replaced keeps signing for 24 hours. */
export const result = answer(webhookEndpointSecretData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook endpoint secret rotated successfully.',
    data: await rotateEndpointSecret(caller.apiKeyId, data.endpointId, encryptSecret),
  }),
});
