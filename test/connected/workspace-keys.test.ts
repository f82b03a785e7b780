import { handler as getApiKeys } from '../../functions/workspace/apikeys-get';
import { handler as createApiKey } from '../../functions/workspace/apikey-create';
import { handler as getAuthTokens } from '../../functions/workspace/authtokens-get';
import { handler as resetAuthToken } from '../../functions/workspace/authtoken-reset';
import { handler as getActivityConfig } from '../../functions/workspace/activityconfig-get';
import { newTenant, type Tenant } from '../support/fixtures';
import { invoke } from '../support/invoke';

const listKeys = (tenant: Tenant, data: unknown = {}) =>
  invoke(getApiKeys, '/v2/workspace/apikeys/get', data, { headers: tenant.workspaceHeaders });
const addKey = (tenant: Tenant, data: unknown = {}) =>
  invoke(createApiKey, '/v2/workspace/apikey/create', data, { headers: tenant.workspaceHeaders });
const readTokens = (headers: Record<string, string>, apiKey: string) =>
  invoke(getAuthTokens, '/v2/workspace/authtokens/get', { apiKey }, { headers });
const reset = (headers: Record<string, string>, apiKey: string) =>
  invoke(resetAuthToken, '/v2/workspace/authtoken/reset', { apiKey }, { headers });
const apiKeyCall = (headers: Record<string, string>) =>
  invoke(getActivityConfig, '/v2/workspace/activityconfig/get', {}, { headers });

describe('workspace API keys and auth tokens', () => {
  let tenant: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    [tenant, other] = await Promise.all([newTenant(), newTenant()]);
  });

  it('lists the first key of a new workspace', async () => {
    const response = await listKeys(tenant);

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual([
      { id: tenant.apiKeyId, apiKeyName: expect.stringMatching(/Test API Key$/), type: 'testing' },
    ]);
    expect(response.body.result).not.toHaveProperty('nextPageToken');
  });

  it('returns the key token, named Default Auth Token, that works on an API-key route', async () => {
    const response = await readTokens(tenant.workspaceHeaders, tenant.apiKeyId);

    expect(response.body.result?.data).toEqual({
      apiKey: tenant.apiKeyId,
      authTokens: [{ token: tenant.authToken, name: 'Default Auth Token', domains: [] }],
    });
    expect((await apiKeyCall(tenant.apiKeyHeaders)).statusCode).toBe(200);
  });

  it('creates testing keys, pages through them, and ends without a token field', async () => {
    const workspace = await newTenant();
    const created = await addKey(workspace, { apiKeyName: 'Second' });
    await addKey(workspace, { apiKeyName: 'Third', createAuthToken: false });

    const first = await listKeys(workspace, { pageSize: 2 });
    const second = await listKeys(workspace, { pageSize: 2, pageToken: first.body.result?.nextPageToken });

    expect(created.body.result?.data).toEqual({ apiKey: expect.stringMatching(/^key_/) });
    expect(first.body.result?.data.map((k: { apiKeyName: string }) => k.apiKeyName)).toEqual([
      expect.stringMatching(/Test API Key$/),
      'Second',
    ]);
    expect(second.body.result?.data.map((k: { apiKeyName: string }) => k.apiKeyName)).toEqual(['Third']);
    expect(second.body.result).not.toHaveProperty('nextPageToken');
  });

  it('filters by key ids, skipping unknown ones and keeping pages full', async () => {
    const workspace = await newTenant();
    const b = (await addKey(workspace, { apiKeyName: 'B' })).body.result?.data.apiKey;
    const c = (await addKey(workspace, { apiKeyName: 'C' })).body.result?.data.apiKey;
    const filter = ['key_unknown', c, workspace.apiKeyId, b, other.apiKeyId];

    const first = await listKeys(workspace, { apiKeys: filter, pageSize: 2 });
    const second = await listKeys(workspace, {
      apiKeys: filter,
      pageSize: 2,
      pageToken: first.body.result?.nextPageToken,
    });

    expect(first.body.result?.data.map((k: { id: string }) => k.id)).toEqual([workspace.apiKeyId, b]);
    expect(second.body.result?.data.map((k: { id: string }) => k.id)).toEqual([c]);
    expect(second.body.result).not.toHaveProperty('nextPageToken');
  });

  it.each([
    ['tampered', (token: string) => `${token.slice(0, -2)}xx`],
    ['garbage', () => 'not-a-token'],
  ])('rejects a %s page token with INVALID_ARGUMENT', async (_, mangle) => {
    const workspace = await newTenant();
    await addKey(workspace);
    const token = (await listKeys(workspace, { pageSize: 1 })).body.result?.nextPageToken as string;

    const response = await listKeys(workspace, { pageSize: 1, pageToken: mangle(token) });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
  });

  it('rejects a page token of another workspace or of another query', async () => {
    const workspace = await newTenant();
    await addKey(workspace);
    const token = (await listKeys(workspace, { pageSize: 1 })).body.result?.nextPageToken as string;

    const foreign = await listKeys(other, { pageSize: 1, pageToken: token });
    const otherQuery = await listKeys(workspace, { pageSize: 1, apiKeys: [workspace.apiKeyId], pageToken: token });

    expect(foreign.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(otherQuery.body.error?.status).toBe('INVALID_ARGUMENT');
  });

  it('refuses to create a production key over the API', async () => {
    const response = await addKey(tenant, { type: 'production' });

    expect(response.statusCode).toBe(403);
    expect(response.body.error?.status).toBe('PERMISSION_DENIED');
  });

  it('creates a key without tokens when createAuthToken is false', async () => {
    const apiKey = (await addKey(tenant, { createAuthToken: false })).body.result?.data.apiKey;

    const response = await readTokens(tenant.workspaceHeaders, apiKey);

    expect(response.body.result?.data).toEqual({ apiKey, authTokens: [] });
  });

  it('resets a key: the new token works and the old one is refused', async () => {
    const workspace = await newTenant();

    const response = await reset(workspace.workspaceHeaders, workspace.apiKeyId);

    const newAuthToken = response.body.result?.data.newAuthToken;
    expect(response.body.result?.data.apiKey).toBe(workspace.apiKeyId);
    expect(newAuthToken).toEqual({ token: expect.any(String), name: 'Default Auth Token', domains: [] });
    expect(newAuthToken.token).not.toBe(workspace.authToken);
    expect((await apiKeyCall(workspace.apiKeyHeaders)).statusCode).toBe(403);
    const fresh = { 'x-service-api-key': workspace.apiKeyId, 'x-service-auth-token': newAuthToken.token };
    expect((await apiKeyCall(fresh)).statusCode).toBe(200);
    expect(
      (await readTokens(workspace.workspaceHeaders, workspace.apiKeyId)).body.result?.data.authTokens,
    ).toHaveLength(1);
  });

  it('leaves exactly one token after parallel resets', async () => {
    const workspace = await newTenant();

    await Promise.all([1, 2, 3].map(() => reset(workspace.workspaceHeaders, workspace.apiKeyId)));

    expect(
      (await readTokens(workspace.workspaceHeaders, workspace.apiKeyId)).body.result?.data.authTokens,
    ).toHaveLength(1);
  });

  describe('tenancy', () => {
    it('never lists another workspace’s keys', async () => {
      const response = await listKeys(other, { apiKeys: [tenant.apiKeyId] });

      expect(response.body.result?.data).toEqual([]);
    });

    it('answers NOT_FOUND for the tokens of another workspace’s key or an unknown key', async () => {
      const foreign = await readTokens(other.workspaceHeaders, tenant.apiKeyId);
      const unknown = await readTokens(other.workspaceHeaders, 'key_does_not_exist');

      expect(foreign.statusCode).toBe(404);
      expect(foreign.body.error).toEqual({ status: 'NOT_FOUND', message: 'API key not found.' });
      expect(unknown.body.error?.message).toBe('API key not found.');
    });

    it('cannot reset another workspace’s key, whose token keeps working', async () => {
      const response = await reset(other.workspaceHeaders, tenant.apiKeyId);

      expect(response.statusCode).toBe(404);
      expect((await apiKeyCall(tenant.apiKeyHeaders)).statusCode).toBe(200);
    });

    it('does not accept one workspace’s id with another’s token', async () => {
      const response = await listKeys({
        ...tenant,
        workspaceHeaders: {
          'x-service-workspace-id': tenant.workspaceId,
          'x-service-workspace-auth-token': other.workspaceToken,
        },
      });

      expect(response.statusCode).toBe(403);
      expect(response.body.error).toEqual({ status: 'PERMISSION_DENIED', message: 'Invalid workspace credentials.' });
    });
  });
});
