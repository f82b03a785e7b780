import { resetAuthTokens } from '../../shared/domain/credentials';
import { forgetApiKeyCredentials } from '../../shared/http/auth';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';
import { readableToken } from '../../shared/http/workspace-results';

export const schema = z.object({ apiKey: clientId() });

export const result = answer(z.object({ apiKey: z.string(), newAuthToken: readableToken() }));

export const handler = operation({
  auth: 'workspace',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const newAuthToken = await resetAuthTokens(caller.workspaceId, data.apiKey);
    // This instance stops accepting the old tokens at once; others within the auth cache's 30 s.
    forgetApiKeyCredentials(data.apiKey);
    return { message: 'Auth token reset successfully.', data: { apiKey: data.apiKey, newAuthToken } };
  },
});
