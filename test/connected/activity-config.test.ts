import { handler as getConfig } from '../../functions/workspace/activityconfig-get';
import { handler as updateConfig } from '../../functions/workspace/activityconfig-update';
import { handler as createApiKey } from '../../functions/workspace/apikey-create';
import { handler as getAuthTokens } from '../../functions/workspace/authtokens-get';
import { STANDARD_COMMENT_TRIGGERS } from '../../shared/domain/activity-config';
import { getActivityConfig } from '../../shared/db/activity-config';
import { newTenant, type Tenant } from '../support/fixtures';
import { invoke } from '../support/invoke';

const update = (tenant: Tenant, activityServiceConfig: unknown) =>
  invoke(
    updateConfig,
    '/v2/workspace/activityconfig/update',
    { activityServiceConfig },
    { headers: tenant.apiKeyHeaders },
  );
const read = (headers: Record<string, string>) =>
  invoke(getConfig, '/v2/workspace/activityconfig/get', {}, { headers });

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

    const response = await invoke(updateConfig, '/v2/workspace/activityconfig/update', data, {
      headers: tenant.apiKeyHeaders,
    });

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
      await invoke(
        getAuthTokens,
        '/v2/workspace/authtokens/get',
        { apiKey: secondKey },
        { headers: tenant.workspaceHeaders },
      )
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
    const many = (from: number) =>
      Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`custom.event${from + i}`, true]));
    for (let batch = 0; batch < 5; batch += 1) {
      expect((await update(tenant, { triggers: { comment: many(batch * 100) } })).statusCode).toBe(200);
    }

    const response = await update(tenant, { triggers: { comment: many(500) } });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(Object.keys((await getActivityConfig(tenant.apiKeyId))?.config.triggers?.comment ?? {})).toHaveLength(500);
  });
});

describe('activity config under concurrent updates', () => {
  it('applies 200 concurrent updates of different triggers: every one succeeds and the stored config holds all 200', async () => {
    const tenant = await newTenant();
    await update(tenant, { isEnabled: true });
    const names = Array.from({ length: 200 }, (_, i) => `custom.concurrent${i}`);

    const replies = await Promise.all(names.map((name) => update(tenant, { triggers: { comment: { [name]: true } } })));

    expect(replies.filter((reply) => reply.statusCode !== 200).map((reply) => reply.body.error)).toEqual([]);
    // Each answer is the whole configuration as stored after that update: its own trigger is in it.
    expect(
      names.filter((name, i) => replies[i].body.result?.data.activityServiceConfig.triggers.comment[name] !== true),
    ).toEqual([]);
    const comment = (await read(tenant.apiKeyHeaders)).body.result?.data.activityServiceConfig.triggers.comment;
    expect(names.filter((name) => comment[name] !== true)).toEqual([]);
    expect(Object.keys(comment)).toHaveLength(STANDARD_COMMENT_TRIGGERS.length + names.length);
  });

  it('seeds once when the first updates of a tenant race, and keeps every trigger they sent', async () => {
    const tenant = await newTenant();
    const names = Array.from({ length: 40 }, (_, i) => `custom.first${i}`);

    // Every request enables: whichever is first seeds (a trigger-only update first would rightly prevent seeding).
    const replies = await Promise.all(
      names.map((name) => update(tenant, { isEnabled: true, triggers: { comment: { [name]: true } } })),
    );

    expect(replies.map((reply) => reply.statusCode)).toEqual(names.map(() => 200));
    const config = (await read(tenant.apiKeyHeaders)).body.result?.data.activityServiceConfig;
    expect(config.isEnabled).toBe(true);
    expect(typeof config.enabledTime).toBe('number');
    expect(Object.keys(config.triggers.comment).sort()).toEqual([...names, ...STANDARD_COMMENT_TRIGGERS].sort());
  });

  it('holds the 500-trigger limit exactly when concurrent updates race past it', async () => {
    const tenant = await newTenant();
    for (let from = 0; from < 400; from += 100) {
      await update(tenant, {
        triggers: {
          comment: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`custom.stored${from + i}`, true])),
        },
      });
    }
    await update(tenant, {
      triggers: {
        comment: Object.fromEntries(Array.from({ length: 90 }, (_, i) => [`custom.stored${400 + i}`, true])),
      },
    });

    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => update(tenant, { triggers: { comment: { [`custom.late${i}`]: true } } })),
    );

    expect(replies.filter((reply) => reply.statusCode === 200)).toHaveLength(10);
    expect(replies.filter((reply) => reply.body.error?.status === 'INVALID_ARGUMENT')).toHaveLength(20);
    expect(Object.keys((await getActivityConfig(tenant.apiKeyId))?.config.triggers?.comment ?? {})).toHaveLength(500);
  });

  it('stores trigger names that look like expression syntax or other attributes as plain keys', async () => {
    const tenant = await newTenant();
    await update(tenant, { isEnabled: true });
    const names = ['a.b.c', '#config', ':v0', 'config', 'version', 'triggers', 'comment[0]', 'space here', 'ü.ß'];

    const replies = await Promise.all(
      names.map((name) => update(tenant, { triggers: { comment: { [name]: false } } })),
    );

    expect(replies.map((reply) => reply.statusCode)).toEqual(names.map(() => 200));
    const stored = (await getActivityConfig(tenant.apiKeyId))?.config;
    expect(names.filter((name) => stored?.triggers?.comment?.[name] !== false)).toEqual([]);
    expect(Object.keys(stored ?? {}).sort()).toEqual(['enabledTime', 'immutable', 'isEnabled', 'triggers']);
  });

  it('lets the last writer win when concurrent updates set the same field, and fails none', async () => {
    const tenant = await newTenant();
    await update(tenant, { isEnabled: true });

    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => update(tenant, { immutable: i % 2 === 0 })));

    expect(replies.map((reply) => reply.statusCode)).toEqual(replies.map(() => 200));
    const stored = (await read(tenant.apiKeyHeaders)).body.result?.data.activityServiceConfig;
    expect(typeof stored.immutable).toBe('boolean');
    expect(Object.keys(stored.triggers.comment)).toHaveLength(STANDARD_COMMENT_TRIGGERS.length);
  });
});
