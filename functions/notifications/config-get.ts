import * as z from 'zod/mini';
import { CONFIG_LEVELS, readNotificationConfig } from '../../shared/domain/notification-config';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId, documentedRules, uniqueIds } from '../../shared/http/schemas';

export const schema = documentedRules(
  z
    .object({
      organizationId: clientId(),
      userId: clientId(),
      documentIds: z.optional(uniqueIds('a document id', { max: 30 })),
      getOrganizationConfig: z.optional(z.boolean()),
    })
    .check(
      z.refine((data) => (data.documentIds?.length ?? 0) > 0 || data.getOrganizationConfig === true, {
        message: 'Give documentIds, or getOrganizationConfig: true.',
        path: ['documentIds'],
      }),
    ),
  {
    anyOf: [
      { properties: { documentIds: { minItems: 1 } }, required: ['documentIds'] },
      { properties: { getOrganizationConfig: { const: true } }, required: ['getOrganizationConfig'] },
    ],
  },
);

/** One entry per requested document, after the organization's entry when `getOrganizationConfig` asks for it. */
const entry = z.object({
  config: z.object({ inbox: z.enum(CONFIG_LEVELS), email: z.enum(CONFIG_LEVELS) }),
  metadata: z.object({
    organizationId: z.string(),
    apiKey: z.string(),
    documentId: z.optional(z.string()),
    userId: z.string(),
  }),
});

export const result = answer(z.array(entry));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'Notification config retrieved successfully.',
    data: await readNotificationConfig(caller.apiKeyId, data),
  }),
});
