import { readAiKeys } from '../../shared/domain/ai-key-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { aiKeyConfigData } from '../../shared/http/workspace-results';
import * as z from 'zod/mini';

export const schema = z.object({});

export const result = answer(aiKeyConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ caller }) => {
    const config = await readAiKeys(caller.apiKeyId);
    return { message: 'AI model API key config retrieved successfully.', data: config };
  },
});
