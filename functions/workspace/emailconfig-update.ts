import { encryptSecret, maskSecret } from '../../shared/crypto/encryption';
import { EMAIL_SERVICE_TYPES } from '../../shared/db/email-config';
import { updateEmailConfig } from '../../shared/domain/email-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { emailConfigData } from '../../shared/http/workspace-results';
import * as z from 'zod/mini';
import { documentedRules, requires, triggerMap } from '../../shared/http/schemas';

// The sender address keeps the case it was given (it is shown to recipients); only surrounding spaces go.
const senderEmail = z
  .string()
  .check(
    z.trim(),
    z.maxLength(254, 'Must be at most 254 characters.'),
    z.regex(z.regexes.email, 'Must be a valid email address.'),
  );

const EMAIL_SERVICE_FIELDS = ['type', 'apiKey', 'fromEmail', 'fromCompany', 'triggers'];

export const schema = documentedRules(
  z
    .object({
      useEmailService: z.optional(z.boolean()),
      emailServiceConfig: z.optional(
        z.object({
          type: z.optional(z.enum(EMAIL_SERVICE_TYPES)),
          // "" clears the stored key; the key itself is never trimmed or echoed in a message.
          apiKey: z.optional(z.string().check(z.maxLength(1024, 'Must be at most 1024 characters.'))),
          fromEmail: z.optional(senderEmail),
          fromCompany: z.optional(z.string().check(z.maxLength(200, 'Must be at most 200 characters.'))),
          triggers: z.optional(triggerMap()),
        }),
      ),
    })
    .check(
      z.refine((data) => data.useEmailService !== undefined || data.emailServiceConfig !== undefined, {
        message: 'Provide useEmailService or emailServiceConfig.',
      }),
      z.refine(
        (data) =>
          data.useEmailService !== undefined ||
          data.emailServiceConfig === undefined ||
          Object.values(data.emailServiceConfig).some((value) => value !== undefined),
        { message: 'Must contain at least one field.', path: ['emailServiceConfig'] },
      ),
    ),
  {
    anyOf: [
      requires('useEmailService'),
      {
        properties: { emailServiceConfig: { anyOf: EMAIL_SERVICE_FIELDS.map((field) => requires(field)) } },
        required: ['emailServiceConfig'],
      },
    ],
  },
);

export const result = answer(emailConfigData());

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const config = await updateEmailConfig(caller.apiKeyId, data, { encryptSecret, maskSecret });
    return { message: 'Email config updated successfully.', data: config };
  },
});
