import { isDisposableEmail } from '../../shared/domain/owner-email';
import { createWorkspace, enforceCreateRateLimit } from '../../shared/domain/workspaces';
import { InvalidArgumentError } from '../../shared/core/errors';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { emailAddress, httpUrl, trimmedNonEmptyText } from '../../shared/http/schemas';

export const schema = z.object({
  ownerEmail: emailAddress(),
  name: z.optional(trimmedNonEmptyText(200)),
  workspaceName: z.optional(trimmedNonEmptyText(200)),
  avatar: z.optional(z.union([z.literal(''), httpUrl(2000)])),
});

export const handler = operation({
  auth: 'none',
  schema,
  handle: async ({ data, request }) => {
    await enforceCreateRateLimit(request.sourceIp);
    if (isDisposableEmail(data.ownerEmail)) throw new InvalidArgumentError('Disposable email domains are not allowed.');
    const { workspace, authToken, apiKey } = await createWorkspace(data);
    return {
      message: 'Workspace created successfully.',
      data: {
        id: workspace.id,
        name: workspace.workspaceName,
        owner: { email: workspace.ownerEmail, id: workspace.ownerId, name: workspace.ownerName, avatar: workspace.avatar },
        authToken,
        apiKeyList: { [apiKey.id]: { apiKeyName: apiKey.apiKeyName, id: apiKey.id, type: apiKey.type } },
      },
    };
  },
});
