import { readAuthTokens } from '../../shared/domain/api-keys';
import { operation } from '../../shared/http/operation';
import { clientId, z } from '../../shared/http/schemas';

export const schema = z.object({ apiKey: clientId() });

export const handler = operation({
  auth: 'workspace',
  schema,
  handle: async ({ data, caller }) => {
    const authTokens = await readAuthTokens(caller.workspaceId, data.apiKey);
    return { message: 'Auth tokens retrieved successfully.', data: { apiKey: data.apiKey, authTokens } };
  },
});
