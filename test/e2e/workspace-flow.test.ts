/**
 * The workspace flow of the README's quick start, over HTTP against the local stack: create a workspace, list its keys,
 * read the key's token, call an API-key route, and see wrong, missing and reset credentials refused.
 */
import { routes } from '../../shared/routes';
import { baseUrl, post } from '../support/http';
import { uniqueEmail } from '../support/ids';

const email = () => uniqueEmail('e2e');

async function workspace() {
  const created = await post('/v2/workspace/create', { ownerEmail: email() });
  const { id, authToken, apiKeyList } = created.body.result.data;
  const workspaceHeaders = { 'x-service-workspace-id': id, 'x-service-workspace-auth-token': authToken };
  return { created, id, workspaceHeaders, apiKeyId: Object.keys(apiKeyList)[0] as string };
}

describe('workspace quick start over HTTP', () => {
  it('creates a workspace, lists its key, reads its token and calls an API-key route with it', async () => {
    const { created, workspaceHeaders, apiKeyId } = await workspace();
    expect(created.status).toBe(200);
    expect(created.headers.get('x-request-id')).toBeTruthy();

    const keys = await post('/v2/workspace/apikeys/get', {}, workspaceHeaders);
    expect(keys.body.result.data).toEqual([{ id: apiKeyId, apiKeyName: expect.any(String), type: 'testing' }]);

    const tokens = await post('/v2/workspace/authtokens/get', { apiKey: apiKeyId }, workspaceHeaders);
    const token = tokens.body.result.data.authTokens[0].token as string;

    const ok = await post(
      '/v2/workspace/activityconfig/get',
      {},
      { 'x-service-api-key': apiKeyId, 'x-service-auth-token': token },
    );
    expect(ok.status).toBe(200);
    expect(ok.body.result.data).toEqual({ activityServiceConfig: { isEnabled: false } });

    const wrong = await post(
      '/v2/workspace/activityconfig/get',
      {},
      { 'x-service-api-key': apiKeyId, 'x-service-auth-token': 'nope' },
    );
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.status).toBe('PERMISSION_DENIED');

    const missing = await post('/v2/workspace/activityconfig/get', {});
    expect(missing.status).toBe(401);
    expect(missing.body.error.status).toBe('UNAUTHENTICATED');

    const reset = await post('/v2/workspace/authtoken/reset', { apiKey: apiKeyId }, workspaceHeaders);
    const fresh = reset.body.result.data.newAuthToken.token as string;
    const old = await post(
      '/v2/workspace/activityconfig/get',
      {},
      { 'x-service-api-key': apiKeyId, 'x-service-auth-token': token },
    );
    const renewed = await post(
      '/v2/workspace/activityconfig/get',
      {},
      { 'x-service-api-key': apiKeyId, 'x-service-auth-token': fresh },
    );
    expect(old.status).toBe(403);
    expect(renewed.status).toBe(200);
  });

  it('never shows one workspace another workspace’s keys or tokens', async () => {
    const first = await workspace();
    const second = await workspace();

    const tokens = await post('/v2/workspace/authtokens/get', { apiKey: first.apiKeyId }, second.workspaceHeaders);
    const keys = await post('/v2/workspace/apikeys/get', { apiKeys: [first.apiKeyId] }, second.workspaceHeaders);

    expect(tokens.status).toBe(404);
    expect(keys.body.result.data).toEqual([]);
  });

  it('answers bad bodies with their documented status and a message', async () => {
    const notJson = await post('/v2/workspace/create', undefined, {}, '{oops');
    const noData = await post('/v2/workspace/create', undefined, {}, '{}');
    const tooBig = await post(
      '/v2/workspace/create',
      undefined,
      {},
      JSON.stringify({ data: { ownerEmail: email(), name: 'x'.repeat(1_100_000) } }),
    );
    const wrongType = await post('/v2/workspace/create', { ownerEmail: ['x'] });

    expect([notJson.status, noData.status, tooBig.status, wrongType.status]).toEqual([400, 400, 413, 400]);
    for (const reply of [notJson, noData, tooBig, wrongType]) {
      expect(reply.body.error.status).toBe('INVALID_ARGUMENT');
      expect(reply.body.error.message.length).toBeGreaterThan(0);
    }
  });

  it('serves every route of the table (none answers 404)', async () => {
    const replies = await Promise.all(
      routes.map(async (route) => [route.path, (await post(route.path, {})).status] as const),
    );

    expect(replies.filter(([, status]) => status === 404 || status === 405 || status >= 500)).toEqual([]);
  });

  it('serves the OpenAPI document', async () => {
    const response = await fetch(`${baseUrl()}/openapi.json`);
    const document = (await response.json()) as { openapi: string; paths: Record<string, unknown> };

    expect(response.status).toBe(200);
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toHaveLength(routes.length);
  });
});
