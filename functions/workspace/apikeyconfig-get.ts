import { readAiKeys } from '../../shared/domain/ai-key-config';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';

export const schema = z.object({});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ caller }) => {
    const config = await readAiKeys(caller.apiKeyId);
    return { message: 'AI model API key config retrieved successfully.', data: config };
  },
});
