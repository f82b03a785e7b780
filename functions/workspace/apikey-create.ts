import { issueApiKey } from '../../shared/domain/credentials';
import { PermissionDeniedError } from '../../shared/core/errors';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { API_KEY_TYPES } from '../../shared/db/api-key';
import { answer } from '../../shared/http/results';
import { trimmedNonEmptyText } from '../../shared/http/schemas';

export const schema = z.object({
  apiKeyName: z.optional(trimmedNonEmptyText(200)),
  type: z.optional(z.enum(API_KEY_TYPES)),
  createAuthToken: z.optional(z.boolean()),
});

/** The new key's id (docs/decisions.md §2). */
export const result = answer(z.object({ apiKey: z.string() }));

export const handler = operation({
  auth: 'workspace',
  schema,
  result,
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
