import * as z from 'zod/mini';
import { updateWebhookConfig } from '../../shared/domain/webhook-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { webhookConfigData } from '../../shared/http/workspace-results';

/** 4096-bit keys are ~740 base64 characters; the limit leaves room for larger keys and line breaks. */
const MAX_PUBLIC_KEY_CHARS = 4096;

export const schema = z
  .object({
    isEnabled: z.optional(z.boolean()),
    encodeData: z.optional(z.boolean()),
    encryptData: z.optional(z.boolean()),
    publicKey: z.optional(z.string().check(z.maxLength(MAX_PUBLIC_KEY_CHARS, `Must be at most ${MAX_PUBLIC_KEY_CHARS} characters.`))),
    enableDataProtection: z.optional(z.boolean()),
  })
  .check(
    z.refine((config) => Object.values(config).some((value) => value !== undefined), {
      message: 'Provide at least one of isEnabled, encodeData, encryptData, publicKey, enableDataProtection.',
    }),
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
