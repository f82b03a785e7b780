import { issueApiKey } from '../../shared/domain/credentials';
import { PermissionDeniedError } from '../../shared/core/errors';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { trimmedNonEmptyText } from '../../shared/http/schemas';

export const schema = z.object({
  apiKeyName: z.optional(trimmedNonEmptyText(200)),
  type: z.optional(z.enum(['testing', 'production'])),
  createAuthToken: z.optional(z.boolean()),
});

export const handler = operation({
  auth: 'workspace',
  schema,
  handle: async ({ data, caller }) => {
    if (data.type === 'production') {
      throw new PermissionDeniedError('Production API keys are issued by the operator, not through the API.');
    }
    const { apiKey } = await issueApiKey({
      workspaceId: caller.workspaceId,
      apiKeyName: data.apiKeyName ?? 'Test API Key',
      type: 'testing',
      createAuthToken: data.createAuthToken ?? true,
    });
    return { message: 'API key created successfully.', data: { apiKey: apiKey.id } };
  },
});
