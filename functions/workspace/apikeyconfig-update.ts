import { encryptSecret, maskSecret } from '../../shared/crypto/encryption';
import { AI_PROVIDERS } from '../../shared/db/ai-key-config';
import { updateAiKeys } from '../../shared/domain/ai-key-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { aiKeyConfigData } from '../../shared/http/workspace-results';
import { documentedRules, nonEmptyUniqueListOf } from '../../shared/http/schemas';
import * as z from 'zod/mini';

/**
 * A provider key: surrounding whitespace (a pasted newline) is dropped; then "" removes the stored key, and
 * anything else is 8 to 1024 characters without whitespace or control characters (no provider key has them, and
 * they could not travel in an HTTP header). Messages never echo the key.
 */
const customerApiKey = documentedRules(
  z.string().check(
    z.trim(),
    z.maxLength(1024, 'Must be at most 1024 characters.'),
    z.refine((key) => key === '' || key.length >= 8, 'Must be empty (to remove the key) or at least 8 characters.'),
    z.refine(
      (key) => !/[\s\u0000-\u001f\u007f-\u009f]/.test(key),
      'Must not contain whitespace or control characters.',
    ),
  ),
  // The same as one pattern: whitespace around it is trimmed, then empty or 8 characters without whitespace or controls.
  { pattern: '^\\s*([^\\s\\u0000-\\u001f\\u007f-\\u009f]{8,})?\\s*$' },
);

export const schema = z.object({
  // At most one entry per provider, so at most three entries.
  aiModelApiKey: nonEmptyUniqueListOf(
    z.object({ provider: z.enum(AI_PROVIDERS), customerApiKey }),
    'provider',
    'a provider',
    AI_PROVIDERS.length,
  ),
});

export const result = answer(aiKeyConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const config = await updateAiKeys(caller.apiKeyId, data.aiModelApiKey, { encryptSecret, maskSecret });
    return { message: 'AI model API key config updated successfully.', data: config };
  },
});
