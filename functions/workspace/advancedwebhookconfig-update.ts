import * as z from 'zod/mini';
import { RSA_PUBLIC_KEY_PATTERN, publicKeyProblem, updateWebhookConfig } from '../../shared/domain/webhook-config';
import { atLeastOneOf, documentedRules } from '../../shared/http/schemas';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { webhookConfigData } from '../../shared/http/workspace-results';

/** 4096-bit keys are ~740 base64 characters. */
const MAX_PUBLIC_KEY_CHARS = 4096;
const KEY_SHAPE_MESSAGE =
  'Must be an RSA key of 2048, 3072 or 4096 bits with exponent 65537, base64 DER (SubjectPublicKeyInfo) without whitespace.';

export const schema = atLeastOneOf(
  z.object({
    isEnabled: z.optional(z.boolean()),
    encodeData: z.optional(z.boolean()),
    encryptData: z.optional(z.boolean()),
    publicKey: z.optional(
      documentedRules(
        z.string().check(
          z.maxLength(MAX_PUBLIC_KEY_CHARS, `Must be at most ${MAX_PUBLIC_KEY_CHARS} characters.`),
          // The document states the pattern; a key that misses it is told what is wrong with it where that is known.
          z.superRefine((key, context) => {
            if (!RSA_PUBLIC_KEY_PATTERN.test(key))
              context.issues.push({ code: 'custom', input: key, message: publicKeyProblem(key) ?? KEY_SHAPE_MESSAGE });
          }),
        ),
        { pattern: RSA_PUBLIC_KEY_PATTERN.source },
      ),
    ),
    enableDataProtection: z.optional(z.boolean()),
  }),
  ['isEnabled', 'encodeData', 'encryptData', 'publicKey', 'enableDataProtection'],
  'Provide at least one of isEnabled, encodeData, encryptData, publicKey, enableDataProtection.',
);

export const result = answer(webhookConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Advanced webhook configuration updated successfully.',
    data: await updateWebhookConfig(caller.apiKeyId, data),
  }),
});
