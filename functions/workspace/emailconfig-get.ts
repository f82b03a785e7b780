import { readEmailConfig } from '../../shared/domain/email-config';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';

export const schema = z.object({});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ caller }) => {
    const config = await readEmailConfig(caller.apiKeyId);
    return { message: 'Email config retrieved successfully.', data: config };
  },
});
