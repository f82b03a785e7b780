import { listWorkspaceApiKeys } from '../../shared/domain/api-keys';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { pageWithNextPageToken } from '../../shared/http/results';
import { clientId, listOf, pageSize, pageToken } from '../../shared/http/schemas';
import { apiKeyEntry } from '../../shared/http/workspace-results';

export const schema = z.object({
  apiKeys: z.optional(listOf(clientId())),
  pageSize: pageSize(100),
  pageToken: z.optional(pageToken()),
});

export const result = pageWithNextPageToken(apiKeyEntry());

export const handler = operation({
  auth: 'workspace',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listWorkspaceApiKeys(caller.workspaceId, {
      apiKeyIds: data.apiKeys,
      pageSize: data.pageSize,
      pageToken: data.pageToken,
    });
    return {
      message: 'API keys retrieved successfully.',
      data: page.apiKeys.map(({ id, apiKeyName, type }) => ({ id, apiKeyName, type })),
      nextPageToken: page.nextPageToken,
    };
  },
});
