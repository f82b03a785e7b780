import { isDisposableEmail } from '../../shared/domain/owner-email';
import { createWorkspace, enforceCreateRateLimit } from '../../shared/domain/workspaces';
import { InvalidArgumentError } from '../../shared/core/errors';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { answer } from '../../shared/http/results';
import { emailAddress, httpUrl, trimmedNonEmptyText } from '../../shared/http/schemas';
import { apiKeyEntry } from '../../shared/http/workspace-results';

export const schema = z.object({
  ownerEmail: emailAddress(),
  name: z.optional(trimmedNonEmptyText(200)),
  workspaceName: z.optional(trimmedNonEmptyText(200)),
  avatar: z.optional(z.union([z.literal(''), httpUrl(2000)])),
});

/** The workspace (docs/api-spec.md "Workspace"): its auth token in clear, once; `apiKeyList` keyed by key id. */
export const result = answer(
  z.object({
    id: z.string(),
    name: z.string(),
    owner: z.object({ email: z.string(), id: z.string(), name: z.string(), avatar: z.string() }),
    authToken: z.string(),
    apiKeyList: z.record(z.string(), apiKeyEntry()),
  }),
);

export const handler = operation({
  auth: 'none',
  schema,
  result,
  handle: async ({ data, request }) => {
    await enforceCreateRateLimit(request.sourceIp);
    if (isDisposableEmail(data.ownerEmail)) throw new InvalidArgumentError('Disposable email domains are not allowed.');
    const { workspace, authToken, apiKey } = await createWorkspace(data);
    return {
      message: 'Workspace created successfully.',
      data: {
        id: workspace.id,
        name: workspace.workspaceName,
        owner: {
          email: workspace.ownerEmail,
          id: workspace.ownerId,
          name: workspace.ownerName,
          avatar: workspace.avatar,
        },
        authToken,
        apiKeyList: { [apiKey.id]: { apiKeyName: apiKey.apiKeyName, id: apiKey.id, type: apiKey.type } },
      },
    };
  },
});
