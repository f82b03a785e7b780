import * as z from 'zod/mini';
import { readWebhookConfig } from '../../shared/domain/webhook-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { webhookConfigData } from '../../shared/http/workspace-results';

export const schema = z.object({});

export const result = answer(webhookConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ caller }) => ({
    message: 'Advanced webhook configuration retrieved successfully.',
    data: await readWebhookConfig(caller.apiKeyId),
  }),
});
