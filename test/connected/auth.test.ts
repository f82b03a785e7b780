import { handler as getActivityConfig } from '../../functions/workspace/activityconfig-get';
import { handler as getApiKeys } from '../../functions/workspace/apikeys-get';
import { authenticate } from '../../shared/http/auth';
import { ServiceError } from '../../shared/core/errors';
import { newTenant, type Tenant } from '../support/fixtures';
import { invoke } from '../support/invoke';

const apiKeyRoute = (headers: Record<string, string>) =>
  invoke(getActivityConfig, '/v2/workspace/activityconfig/get', {}, { headers });
const workspaceRoute = (headers: Record<string, string>) =>
  invoke(getApiKeys, '/v2/workspace/apikeys/get', {}, { headers });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (error) {
    return error instanceof ServiceError ? error.code : 'OTHER';
  }
}

describe('authentication', () => {
  let tenant: Tenant;
  let other: Tenant;

  beforeAll(async () => {
    [tenant, other] = await Promise.all([newTenant(), newTenant()]);
  });

  it('accepts an API key with its token, whatever the header case', async () => {
    const response = await apiKeyRoute({
      'X-Service-Api-Key': tenant.apiKeyId,
      'X-SERVICE-AUTH-TOKEN': tenant.authToken,
    });

    expect(response.statusCode).toBe(200);
  });

  it.each([
    ['no headers', {}],
    ['only the key', { 'x-service-api-key': 'key_x' }],
    ['only the token', { 'x-service-auth-token': 'token' }],
  ])('answers UNAUTHENTICATED (401) with %s', async (_, headers) => {
    const response = await apiKeyRoute(headers);

    expect(response.statusCode).toBe(401);
    expect(response.body.error?.status).toBe('UNAUTHENTICATED');
  });

  it('answers PERMISSION_DENIED (403) for a wrong token, an unknown key and another key’s token', async () => {
    const wrong = await apiKeyRoute({ 'x-service-api-key': tenant.apiKeyId, 'x-service-auth-token': 'wrong' });
    const unknown = await apiKeyRoute({ 'x-service-api-key': 'key_unknown', 'x-service-auth-token': tenant.authToken });
    const crossed = await apiKeyRoute({
      'x-service-api-key': tenant.apiKeyId,
      'x-service-auth-token': other.authToken,
    });

    for (const response of [wrong, unknown, crossed]) {
      expect(response.statusCode).toBe(403);
      expect(response.body.error).toEqual({ status: 'PERMISSION_DENIED', message: 'Invalid API key.' });
    }
  });

  it('does not accept workspace credentials on an API-key route, nor key credentials on a workspace route', async () => {
    const keyRoute = await apiKeyRoute(tenant.workspaceHeaders);
    const wsRoute = await workspaceRoute(tenant.apiKeyHeaders);

    expect(keyRoute.statusCode).toBe(401);
    expect(wsRoute.statusCode).toBe(401);
  });

  it('accepts x-service-auth-token as the workspace token header', async () => {
    const response = await workspaceRoute({
      'x-service-workspace-id': tenant.workspaceId,
      'x-service-auth-token': tenant.workspaceToken,
    });

    expect(response.statusCode).toBe(200);
  });

  it('refuses absurdly long credentials without touching storage', async () => {
    const response = await apiKeyRoute({ 'x-service-api-key': 'k'.repeat(10000), 'x-service-auth-token': 't' });

    expect(response.statusCode).toBe(403);
  });

  it('stops accepting a token reset in another process within 30 seconds', async () => {
    const workspace = await newTenant();
    const now = Date.now();
    await authenticate('apiKey', workspace.apiKeyHeaders, now);
    // Another Lambda instance resets the key: a fresh copy of the modules has its own credential cache.
    await jest.isolateModulesAsync(async () => {
      const { resetAuthTokens } = await import('../../shared/domain/credentials');
      await resetAuthTokens(workspace.workspaceId, workspace.apiKeyId);
    });

    const within = await codeOf(authenticate('apiKey', workspace.apiKeyHeaders, now + 29_000));
    const after = await codeOf(authenticate('apiKey', workspace.apiKeyHeaders, now + 30_001));

    expect(within).toBe('OK');
    expect(after).toBe('PERMISSION_DENIED');
  });
});
