import { handler as getConfig } from '../../functions/workspace/activityconfig-get';
import { handler as updateConfig } from '../../functions/workspace/activityconfig-update';
import { handler as createApiKey } from '../../functions/workspace/apikey-create';
import { handler as getAuthTokens } from '../../functions/workspace/authtokens-get';
import { STANDARD_COMMENT_TRIGGERS } from '../../shared/domain/activity-config';
import { getActivityConfig } from '../../shared/db/activity-config';
import { newTenant, type Tenant } from '../support/fixtures';
import { invoke } from '../support/invoke';

const update = (tenant: Tenant, activityServiceConfig: unknown) =>
  invoke(updateConfig, '/v2/workspace/activityconfig/update', { activityServiceConfig }, { headers: tenant.apiKeyHeaders });
const read = (headers: Record<string, string>) => invoke(getConfig, '/v2/workspace/activityconfig/get', {}, { headers });

describe('activity config', () => {
  it('reads isEnabled false when never set', async () => {
    const tenant = await newTenant();

    const response = await read(tenant.apiKeyHeaders);

    expect(response.body.result?.data).toEqual({ activityServiceConfig: { isEnabled: false } });
  });

  it('seeds the standard comment triggers, immutable and enabledTime on first enable', async () => {
    const tenant = await newTenant();
    const before = Date.now();

    const response = await update(tenant, { isEnabled: true });

    const config = response.body.result?.data.activityServiceConfig;
    expect(config.isEnabled).toBe(true);
    expect(config.immutable).toBe(true);
    expect(config.enabledTime).toBeGreaterThanOrEqual(before);
    expect(Object.keys(config.triggers.comment).sort()).toEqual([...STANDARD_COMMENT_TRIGGERS].sort());
    expect(config.triggers.comment['comment_annotation.suggestion_accept']).toBe(true);
    expect(config.triggers.comment['comment_annotation.suggestion_reject']).toBe(true);
    expect((await read(tenant.apiKeyHeaders)).body.result?.data.activityServiceConfig).toEqual(config);
  });

  it('merges values sent with the first enable over the defaults', async () => {
    const tenant = await newTenant();

    const response = await update(tenant, {
      isEnabled: true,
      enabledTime: 1700000000000,
      immutable: false,
      triggers: { comment: { 'comment.add': false, 'custom.event': true } },
    });

    const config = response.body.result?.data.activityServiceConfig;
    expect(config).toMatchObject({ isEnabled: true, enabledTime: 1700000000000, immutable: false });
    expect(config.triggers.comment['comment.add']).toBe(false);
    expect(config.triggers.comment['custom.event']).toBe(true);
    expect(config.triggers.comment['comment.update']).toBe(true);
  });

  it('keeps everything else when a later update sends only immutable:false', async () => {
    const tenant = await newTenant();
    const first = (await update(tenant, { isEnabled: true })).body.result?.data.activityServiceConfig;

    const response = await update(tenant, { immutable: false });

    expect(response.body.result?.data.activityServiceConfig).toEqual({ ...first, immutable: false });
  });

  it('deep-merges one trigger without dropping the others', async () => {
    const tenant = await newTenant();
    await update(tenant, { isEnabled: true });

    const response = await update(tenant, { triggers: { comment: { 'comment.delete': false } } });

    const comment = response.body.result?.data.activityServiceConfig.triggers.comment;
    expect(comment['comment.delete']).toBe(false);
    expect(Object.keys(comment)).toHaveLength(STANDARD_COMMENT_TRIGGERS.length);
  });

  it('always reports isEnabled, even when an update never set it', async () => {
    const tenant = await newTenant();

    const response = await update(tenant, { immutable: true });

    expect(response.body.result?.data.activityServiceConfig).toEqual({ immutable: true, isEnabled: false });
  });

  it.each([
    ['an empty activityServiceConfig', { activityServiceConfig: {} }],
    ['a missing activityServiceConfig', {}],
    ['a string isEnabled', { activityServiceConfig: { isEnabled: 'yes' } }],
    ['a non-boolean trigger', { activityServiceConfig: { triggers: { comment: { 'comment.add': 1 } } } }],
    ['a negative enabledTime', { activityServiceConfig: { enabledTime: -1 } }],
  ])('rejects %s with INVALID_ARGUMENT and stores nothing', async (_, data) => {
    const tenant = await newTenant();

    const response = await invoke(updateConfig, '/v2/workspace/activityconfig/update', data, { headers: tenant.apiKeyHeaders });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(await getActivityConfig(tenant.apiKeyId)).toBeUndefined();
  });

  it('is not visible to another key of the same workspace nor to another workspace', async () => {
    const tenant = await newTenant();
    const stranger = await newTenant();
    const secondKey = (
      await invoke(createApiKey, '/v2/workspace/apikey/create', {}, { headers: tenant.workspaceHeaders })
    ).body.result?.data.apiKey;
    const token = (
      await invoke(getAuthTokens, '/v2/workspace/authtokens/get', { apiKey: secondKey }, { headers: tenant.workspaceHeaders })
    ).body.result?.data.authTokens[0].token;
    await update(tenant, { isEnabled: true });

    const sibling = await read({ 'x-service-api-key': secondKey, 'x-service-auth-token': token });
    const foreign = await read(stranger.apiKeyHeaders);

    expect(sibling.body.result?.data).toEqual({ activityServiceConfig: { isEnabled: false } });
    expect(foreign.body.result?.data).toEqual({ activityServiceConfig: { isEnabled: false } });
    expect((await read(tenant.apiKeyHeaders)).body.result?.data.activityServiceConfig.isEnabled).toBe(true);
  });
});

describe('activity config trigger limit', () => {
  it('refuses an update that would store more than 500 triggers, keeping what was stored', async () => {
    const tenant = await newTenant();
    const many = (from: number) => Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`custom.event${from + i}`, true]));
    for (let batch = 0; batch < 5; batch += 1) {
      expect((await update(tenant, { triggers: { comment: many(batch * 100) } })).statusCode).toBe(200);
    }

    const response = await update(tenant, { triggers: { comment: many(500) } });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(Object.keys((await getActivityConfig(tenant.apiKeyId))?.config.triggers?.comment ?? {})).toHaveLength(500);
  });
});
