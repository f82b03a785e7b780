import { readAuthTokens } from '../../shared/domain/credentials';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';
import { readableToken } from '../../shared/http/workspace-results';

export const schema = z.object({ apiKey: clientId() });

export const result = answer(z.object({ apiKey: z.string(), authTokens: z.array(readableToken()) }));

export const handler = operation({
  auth: 'workspace',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const authTokens = await readAuthTokens(caller.workspaceId, data.apiKey);
    return { message: 'Auth tokens retrieved successfully.', data: { apiKey: data.apiKey, authTokens } };
  },
});
