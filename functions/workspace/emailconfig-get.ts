import { readEmailConfig } from '../../shared/domain/email-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { emailConfigData } from '../../shared/http/workspace-results';
import * as z from 'zod/mini';

export const schema = z.object({});

export const result = answer(emailConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ caller }) => {
    const config = await readEmailConfig(caller.apiKeyId);
    return { message: 'Email config retrieved successfully.', data: config };
  },
});
