/** Workspaces and credentials for connected tests, made through the real handlers. */
import { handler as createWorkspace } from '../../functions/workspace/create';
import { handler as getAuthTokens } from '../../functions/workspace/authtokens-get';
import { invoke } from './invoke';
import { uniqueEmail } from './ids';

export interface Tenant {
  email: string;
  workspaceId: string;
  workspaceToken: string;
  apiKeyId: string;
  authToken: string;
  workspaceHeaders: Record<string, string>;
  apiKeyHeaders: Record<string, string>;
}

/** Creates a workspace for a new email and reads its first key's token. */
export async function newTenant(email = uniqueEmail(), workspaceName?: string): Promise<Tenant> {
  const created = await invoke(createWorkspace, '/v2/workspace/create', { ownerEmail: email, workspaceName });
  if (created.statusCode !== 200) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const { id: workspaceId, authToken: workspaceToken, apiKeyList } = created.body.result?.data;
  const apiKeyId = Object.keys(apiKeyList)[0];
  const workspaceHeaders = { 'x-service-workspace-id': workspaceId, 'x-service-workspace-auth-token': workspaceToken };
  const tokens = await invoke(
    getAuthTokens,
    '/v2/workspace/authtokens/get',
    { apiKey: apiKeyId },
    { headers: workspaceHeaders },
  );
  const authToken = tokens.body.result?.data.authTokens[0].token;
  return {
    email,
    workspaceId,
    workspaceToken,
    apiKeyId,
    authToken,
    workspaceHeaders,
    apiKeyHeaders: { 'x-service-api-key': apiKeyId, 'x-service-auth-token': authToken },
  };
}

/** A second API key of the tenant's workspace, with its token: same workspace, another tenant. */
export async function siblingKey(tenant: Tenant): Promise<Record<string, string>> {
  const { handler: createApiKey } = await import('../../functions/workspace/apikey-create');
  const created = await invoke(createApiKey, '/v2/workspace/apikey/create', {}, { headers: tenant.workspaceHeaders });
  const apiKeyId = created.body.result?.data.apiKey as string;
  const tokens = await invoke(
    getAuthTokens,
    '/v2/workspace/authtokens/get',
    { apiKey: apiKeyId },
    { headers: tenant.workspaceHeaders },
  );
  return { 'x-service-api-key': apiKeyId, 'x-service-auth-token': tokens.body.result?.data.authTokens[0].token };
}
