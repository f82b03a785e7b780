import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler as getConfig } from '../../functions/workspace/emailconfig-get';
import { handler as updateConfig } from '../../functions/workspace/emailconfig-update';
import { decryptSecret } from '../../shared/crypto/encryption';
import { TABLE_NAME, db } from '../../shared/db/client';
import { getEmailConfig } from '../../shared/db/email-config';
import { tenantKey } from '../../shared/db/keys';
import { STANDARD_COMMENT_TRIGGERS } from '../../shared/domain/activity-config';
import { HUDDLE_TRIGGERS, providerKeyContext } from '../../shared/domain/email-config';
import { captureOutput } from '../support/capture-output';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { invoke, endpoint } from '../support/invoke';

const UPDATE = '/v2/workspace/emailconfig/update';
const GET = '/v2/workspace/emailconfig/get';

const update = endpoint(updateConfig, UPDATE);
const read = (headers: Record<string, string>) => invoke(getConfig, GET, {}, { headers });
const rawItem = async (tenant: Tenant) =>
  (
    await db.send(
      new GetCommand({ TableName: TABLE_NAME, Key: { pk: tenantKey(tenant.apiKeyId), sk: 'CONFIG#EMAIL' } }),
    )
  ).Item;

const DEFAULT_TRIGGERS = [...STANDARD_COMMENT_TRIGGERS, ...HUDDLE_TRIGGERS];
const NEVER_SET = { useEmailService: false, emailServiceConfig: {} };
// Looks like a provider key; distinctive enough that finding it anywhere means it leaked.
const providerKey = () => `SG.${Math.random().toString(36).slice(2)}-clear-provider-key-${Date.now()}`;

describe('email config', () => {
  it('reads useEmailService false and an empty emailServiceConfig when never set', async () => {
    const tenant = await newTenant();

    const response = await read(tenant.apiKeyHeaders);

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual(NEVER_SET);
  });

  it('seeds type custom, the comment and huddle triggers and useEmailService on first enable', async () => {
    const tenant = await newTenant();

    const response = await update(tenant.apiKeyHeaders, { useEmailService: true });

    const data = response.body.result?.data;
    expect(data.useEmailService).toBe(true);
    expect(data.emailServiceConfig.type).toBe('custom');
    expect(Object.keys(data.emailServiceConfig.triggers).sort()).toEqual([...DEFAULT_TRIGGERS].sort());
    expect(Object.values(data.emailServiceConfig.triggers).every((on) => on === true)).toBe(true);
    expect(data.emailServiceConfig.triggers['huddle.create']).toBe(true);
    expect(data.emailServiceConfig.triggers['huddle.join']).toBe(true);
    expect((await read(tenant.apiKeyHeaders)).body.result?.data).toEqual(data);
  });

  it('seeds when type custom enables the service, and turns useEmailService on', async () => {
    const tenant = await newTenant();

    const data = (await update(tenant.apiKeyHeaders, { emailServiceConfig: { type: 'custom' } })).body.result?.data;

    expect(data.useEmailService).toBe(true);
    expect(Object.keys(data.emailServiceConfig.triggers)).toHaveLength(DEFAULT_TRIGGERS.length);
  });

  it('merges the values sent with the first enable over the defaults (the request wins)', async () => {
    const tenant = await newTenant();

    const response = await update(tenant.apiKeyHeaders, {
      useEmailService: true,
      emailServiceConfig: {
        type: 'sendgrid',
        fromCompany: 'Acme',
        triggers: { 'comment.add': false, 'custom.event': true },
      },
    });

    const config = response.body.result?.data.emailServiceConfig;
    expect(response.body.result?.data.useEmailService).toBe(true);
    expect(config).toMatchObject({ type: 'sendgrid', fromCompany: 'Acme' });
    expect(config.triggers['comment.add']).toBe(false);
    expect(config.triggers['custom.event']).toBe(true);
    expect(config.triggers['comment.update']).toBe(true);
    expect(config.triggers['huddle.join']).toBe(true);
  });

  it('keeps non-trigger fields stored before through seeding', async () => {
    const tenant = await newTenant();
    const before = await update(tenant.apiKeyHeaders, {
      emailServiceConfig: { fromEmail: 'Alerts@Acme.example', fromCompany: 'Acme', type: 'sendgrid' },
    });
    expect(before.body.result?.data).toEqual({
      useEmailService: false,
      emailServiceConfig: { type: 'sendgrid', fromEmail: 'Alerts@Acme.example', fromCompany: 'Acme' },
    });

    const response = await update(tenant.apiKeyHeaders, { useEmailService: true });

    const data = response.body.result?.data;
    expect(data.useEmailService).toBe(true);
    expect(data.emailServiceConfig).toMatchObject({
      type: 'sendgrid',
      fromEmail: 'Alerts@Acme.example',
      fromCompany: 'Acme',
    });
    expect(Object.keys(data.emailServiceConfig.triggers)).toHaveLength(DEFAULT_TRIGGERS.length);
  });

  it('does not seed again once triggers are stored', async () => {
    const tenant = await newTenant();
    await update(tenant.apiKeyHeaders, { emailServiceConfig: { triggers: { 'comment.add': true } } });

    const data = (await update(tenant.apiKeyHeaders, { useEmailService: true })).body.result?.data;

    expect(data).toEqual({ useEmailService: true, emailServiceConfig: { triggers: { 'comment.add': true } } });
  });

  it('keeps everything else on later partial updates, merging triggers key by key', async () => {
    const tenant = await newTenant();
    const key = providerKey();
    const first = (
      await update(tenant.apiKeyHeaders, {
        useEmailService: true,
        emailServiceConfig: { apiKey: key, fromEmail: 'a@acme.example' },
      })
    ).body.result?.data;

    const byTrigger = (
      await update(tenant.apiKeyHeaders, { emailServiceConfig: { triggers: { 'huddle.join': false } } })
    ).body.result?.data;
    const byName = (await update(tenant.apiKeyHeaders, { emailServiceConfig: { fromCompany: 'Acme' } })).body.result
      ?.data;
    const disabled = (await update(tenant.apiKeyHeaders, { useEmailService: false })).body.result?.data;

    const expected = {
      ...first,
      emailServiceConfig: {
        ...first.emailServiceConfig,
        triggers: { ...first.emailServiceConfig.triggers, 'huddle.join': false },
      },
    };
    expect(byTrigger).toEqual(expected);
    expect(byName).toEqual({
      ...expected,
      emailServiceConfig: { ...expected.emailServiceConfig, fromCompany: 'Acme' },
    });
    expect(disabled).toEqual({ ...byName, useEmailService: false });
    expect((await read(tenant.apiKeyHeaders)).body.result?.data).toEqual(disabled);
  });

  it('merges concurrent updates of different triggers without losing one', async () => {
    const tenant = await newTenant();
    await update(tenant.apiKeyHeaders, { useEmailService: true });
    const names = ['a.one', 'b.two', 'c.three', 'd.four'];

    const replies = await Promise.all(
      names.map((name) => update(tenant.apiKeyHeaders, { emailServiceConfig: { triggers: { [name]: true } } })),
    );

    expect(replies.map((reply) => reply.statusCode)).toEqual([200, 200, 200, 200]);
    const triggers = (await read(tenant.apiKeyHeaders)).body.result?.data.emailServiceConfig.triggers;
    expect(names.every((name) => triggers[name] === true)).toBe(true);
    expect(Object.keys(triggers)).toHaveLength(DEFAULT_TRIGGERS.length + names.length);
  });

  it('applies 200 concurrent updates of different triggers: every one succeeds and the stored config holds all 200', async () => {
    const tenant = await newTenant();
    await update(tenant.apiKeyHeaders, { useEmailService: true });
    const names = Array.from({ length: 200 }, (_, i) => `custom.concurrent${i}`);

    const replies = await Promise.all(
      names.map((name) => update(tenant.apiKeyHeaders, { emailServiceConfig: { triggers: { [name]: true } } })),
    );

    expect(replies.filter((reply) => reply.statusCode !== 200).map((reply) => reply.body.error)).toEqual([]);
    // Each answer is the whole configuration as stored after that update: its own trigger is in it.
    expect(names.filter((name, i) => replies[i].body.result?.data.emailServiceConfig.triggers[name] !== true)).toEqual(
      [],
    );
    const triggers = (await read(tenant.apiKeyHeaders)).body.result?.data.emailServiceConfig.triggers;
    expect(names.filter((name) => triggers[name] !== true)).toEqual([]);
    expect(Object.keys(triggers)).toHaveLength(DEFAULT_TRIGGERS.length + names.length);
  });

  it('keeps every field of concurrent updates that set different fields, the key and the switch included', async () => {
    const tenant = await newTenant();
    const key = providerKey();

    const replies = await Promise.all([
      update(tenant.apiKeyHeaders, { useEmailService: true }),
      update(tenant.apiKeyHeaders, { emailServiceConfig: { type: 'sendgrid' } }),
      update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: key } }),
      update(tenant.apiKeyHeaders, { emailServiceConfig: { fromEmail: 'team@acme.example' } }),
      update(tenant.apiKeyHeaders, { emailServiceConfig: { fromCompany: 'Acme' } }),
      update(tenant.apiKeyHeaders, { emailServiceConfig: { triggers: { 'custom.one': true } } }),
    ]);

    expect(replies.map((reply) => reply.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    const stored = (await read(tenant.apiKeyHeaders)).body.result?.data;
    expect(stored).toMatchObject({
      useEmailService: true,
      emailServiceConfig: {
        type: 'sendgrid',
        apiKey: `${'*'.repeat(key.length - 4)}${key.slice(-4)}`,
        fromEmail: 'team@acme.example',
        fromCompany: 'Acme',
      },
    });
    expect(stored.emailServiceConfig.triggers['custom.one']).toBe(true);
  });

  describe('provider API key', () => {
    it('refuses its old masked form after the key was cleared, and stores nothing for it', async () => {
      const tenant = await newTenant();
      const set = await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: providerKey() } });
      const oldMask = set.body.result?.data.emailServiceConfig.apiKey;
      await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: '' } });

      const resent = await update(tenant.apiKeyHeaders, {
        emailServiceConfig: { apiKey: oldMask, fromCompany: 'Acme' },
      });

      expect(resent.statusCode).toBe(400);
      expect(resent.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(resent.body.error?.details.issues).toEqual([
        {
          path: 'data.emailServiceConfig.apiKey',
          message: 'Is a masked key, but no key is stored to keep: send the key itself.',
        },
      ]);
      expect((await rawItem(tenant))?.config).not.toHaveProperty('providerKey');
      expect((await rawItem(tenant))?.config.emailServiceConfig).not.toHaveProperty('fromCompany');
    });

    it("refuses a masked form when no key was ever stored, and one that is not the stored key's mask", async () => {
      const tenant = await newTenant();
      const fresh = await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: '********wxyz' } });
      await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: `${providerKey()}-ABCD` } });
      const stored = (await rawItem(tenant))?.config.providerKey;

      const other = await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: '****************WXYZ' } });

      expect(fresh.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(other.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(other.body.error?.details.issues[0].path).toBe('data.emailServiceConfig.apiKey');
      expect((await rawItem(tenant))?.config.providerKey).toEqual(stored);
      expect(stored.masked).toMatch(/^\*+ABCD$/);
    });

    it('is shown masked (last four visible) by update and get, never in clear', async () => {
      const tenant = await newTenant();
      const key = providerKey();

      const updated = await update(tenant.apiKeyHeaders, { emailServiceConfig: { type: 'sendgrid', apiKey: key } });
      const fetched = await read(tenant.apiKeyHeaders);

      const masked = `${'*'.repeat(key.length - 4)}${key.slice(-4)}`;
      expect(updated.body.result?.data.emailServiceConfig.apiKey).toBe(masked);
      expect(fetched.body.result?.data.emailServiceConfig.apiKey).toBe(masked);
      expect(JSON.stringify(updated.body)).not.toContain(key);
      expect(JSON.stringify(fetched.body)).not.toContain(key);
    });

    it('is stored only as ciphertext bound to the tenant, never in clear', async () => {
      const tenant = await newTenant();
      const key = providerKey();

      await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: key } });

      const item = await rawItem(tenant);
      expect(item).toBeDefined();
      expect(JSON.stringify(item)).not.toContain(key);
      const { ciphertext } = item?.config.providerKey;
      expect(await decryptSecret(ciphertext, providerKeyContext(tenant.apiKeyId))).toBe(key);
      await expect(decryptSecret(ciphertext, providerKeyContext('another-key'))).rejects.toThrow();
    });

    it('is replaced by a new key, kept when the masked form is sent back, and cleared by ""', async () => {
      const tenant = await newTenant();
      const firstKey = providerKey();
      const secondKey = `${providerKey()}-WXYZ`;
      await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: firstKey } });
      const firstCiphertext = (await rawItem(tenant))?.config.providerKey.ciphertext;

      const replaced = await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: secondKey } });
      const second = (await rawItem(tenant))?.config.providerKey;
      const echoed = await update(tenant.apiKeyHeaders, {
        emailServiceConfig: { apiKey: replaced.body.result?.data.emailServiceConfig.apiKey },
      });
      const afterEcho = (await rawItem(tenant))?.config.providerKey;
      const cleared = await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: '' } });

      expect(replaced.body.result?.data.emailServiceConfig.apiKey).toMatch(/^\*+WXYZ$/);
      expect(second.ciphertext).not.toBe(firstCiphertext);
      expect(await decryptSecret(second.ciphertext, providerKeyContext(tenant.apiKeyId))).toBe(secondKey);
      expect(echoed.body.result?.data.emailServiceConfig.apiKey).toMatch(/^\*+WXYZ$/);
      expect(afterEcho).toEqual(second);
      expect(cleared.body.result?.data.emailServiceConfig).not.toHaveProperty('apiKey');
      expect((await rawItem(tenant))?.config).not.toHaveProperty('providerKey');
      expect((await read(tenant.apiKeyHeaders)).body.result?.data.emailServiceConfig).not.toHaveProperty('apiKey');
    });

    it('never appears in the logs, even at DEBUG level, nor in a validation error', async () => {
      const tenant = await newTenant();
      const key = providerKey();
      let refused: Awaited<ReturnType<typeof update>> | undefined;
      const output = await captureOutput(async () => {
        await update(tenant.apiKeyHeaders, { useEmailService: true, emailServiceConfig: { apiKey: key } });
        await read(tenant.apiKeyHeaders);
        refused = await update(tenant.apiKeyHeaders, {
          emailServiceConfig: { apiKey: key, fromEmail: 'not-an-email' },
        });
        await update(tenant.apiKeyHeaders, { emailServiceConfig: { apiKey: `${key}${'x'.repeat(1024)}` } });
      });

      expect(output).toContain('email config updated');
      expect(output).toContain('request completed');
      expect(output).not.toContain(key);
      expect(refused?.statusCode).toBe(400);
      expect(JSON.stringify(refused?.body)).not.toContain(key);
    });
  });

  it.each([
    ['neither useEmailService nor emailServiceConfig', {}],
    ['an empty emailServiceConfig', { emailServiceConfig: {} }],
    ['an emailServiceConfig of unknown fields only', { emailServiceConfig: { smtpHost: 'mail.example' } }],
    ['a string useEmailService', { useEmailService: 'yes' }],
    ['an emailServiceConfig that is not an object', { emailServiceConfig: 'sendgrid' }],
    ['an unknown type', { useEmailService: true, emailServiceConfig: { type: 'mailgun' } }],
    ['a numeric apiKey', { emailServiceConfig: { apiKey: 1234 } }],
    ['an apiKey over 1024 characters', { emailServiceConfig: { apiKey: 'k'.repeat(1025) } }],
    ['an invalid fromEmail', { emailServiceConfig: { fromEmail: 'acme.example' } }],
    [
      'a fromEmail over 254 characters',
      {
        emailServiceConfig: {
          fromEmail: `${'a'.repeat(64)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example`,
        },
      },
    ],
    ['a fromCompany over 200 characters', { emailServiceConfig: { fromCompany: 'c'.repeat(201) } }],
    ['a non-boolean trigger', { emailServiceConfig: { triggers: { 'comment.add': 'on' } } }],
    ['a trigger key over 200 characters', { emailServiceConfig: { triggers: { ['t'.repeat(201)]: true } } }],
    [
      'more than 100 triggers',
      { emailServiceConfig: { triggers: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`e.${i}`, true])) } },
    ],
    ['triggers that are an array', { emailServiceConfig: { triggers: [true] } }],
    [
      'a valid useEmailService with an invalid field',
      { useEmailService: true, emailServiceConfig: { fromCompany: 7 } },
    ],
  ])('rejects %s with INVALID_ARGUMENT and stores nothing', async (_, data) => {
    const tenant = await newTenant();

    const response = await update(tenant.apiKeyHeaders, data);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(response.body.error?.details.issues.length).toBeGreaterThan(0);
    expect(await getEmailConfig(tenant.apiKeyId)).toBeUndefined();
  });

  it('accepts useEmailService with an empty emailServiceConfig, and strips unknown fields', async () => {
    const tenant = await newTenant();

    const response = await update(tenant.apiKeyHeaders, {
      useEmailService: false,
      emailServiceConfig: { fromCompany: 'Acme', ciphertext: 'x' },
      providerKey: { masked: '****nope' },
    });
    const empty = await update(tenant.apiKeyHeaders, { useEmailService: false, emailServiceConfig: {} });

    expect(response.body.result?.data).toEqual({ useEmailService: false, emailServiceConfig: { fromCompany: 'Acme' } });
    expect(empty.body.result?.data).toEqual(response.body.result?.data);
    expect((await rawItem(tenant))?.config).toEqual({
      useEmailService: false,
      emailServiceConfig: { fromCompany: 'Acme' },
    });
  });

  it('refuses an update that would store more than 500 triggers, and keeps the stored ones', async () => {
    const tenant = await newTenant();
    const batch = (from: number) =>
      Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`event.${from + i}`, true]));
    for (let from = 0; from < 500; from += 100) {
      expect((await update(tenant.apiKeyHeaders, { emailServiceConfig: { triggers: batch(from) } })).statusCode).toBe(
        200,
      );
    }

    const response = await update(tenant.apiKeyHeaders, { emailServiceConfig: { triggers: { 'one.more': true } } });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(Object.keys((await getEmailConfig(tenant.apiKeyId))?.config.emailServiceConfig.triggers ?? {})).toHaveLength(
      500,
    );
  });

  it('belongs to its API key: a sibling key and another workspace see the default and cannot change it', async () => {
    const tenant = await newTenant();
    const stranger = await newTenant();
    const sibling = await siblingKey(tenant);
    const key = providerKey();
    const own = (await update(tenant.apiKeyHeaders, { useEmailService: true, emailServiceConfig: { apiKey: key } }))
      .body.result?.data;

    const siblingRead = await read(sibling);
    const strangerRead = await read(stranger.apiKeyHeaders);
    const siblingUpdate = await update(sibling, {
      useEmailService: false,
      emailServiceConfig: { fromCompany: 'Sibling', apiKey: '' },
    });
    const strangerUpdate = await update(stranger.apiKeyHeaders, {
      emailServiceConfig: { triggers: { 'comment.add': false } },
    });

    expect(siblingRead.body.result?.data).toEqual(NEVER_SET);
    expect(strangerRead.body.result?.data).toEqual(NEVER_SET);
    expect(siblingUpdate.body.result?.data).toEqual({
      useEmailService: false,
      emailServiceConfig: { fromCompany: 'Sibling' },
    });
    expect(strangerUpdate.body.result?.data).toEqual({
      useEmailService: false,
      emailServiceConfig: { triggers: { 'comment.add': false } },
    });
    expect((await read(tenant.apiKeyHeaders)).body.result?.data).toEqual(own);
  });
});
