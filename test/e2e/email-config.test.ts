/**
 * The email configuration over HTTP against the local stack (the update function encrypts with the local
 * keyring): default, first enable with seeding, masked provider key, partial update, validation, tenancy.
 */
import { randomUUID } from 'node:crypto';
import { newApiKeyHeaders, post } from '../support/http';

describe('email config over HTTP', () => {
  it('seeds on first enable, masks the provider key, deep-merges updates and keeps tenants apart', async () => {
    const headers = await newApiKeyHeaders();
    const other = await newApiKeyHeaders();
    const key = `SG.${randomUUID()}-e2e-provider-key`;

    const initial = await post('/v2/workspace/emailconfig/get', {}, headers);
    const enabled = await post(
      '/v2/workspace/emailconfig/update',
      {
        useEmailService: true,
        emailServiceConfig: {
          type: 'sendgrid',
          apiKey: key,
          fromEmail: 'alerts@acme.example',
          triggers: { 'comment.add': false },
        },
      },
      headers,
    );
    const renamed = await post(
      '/v2/workspace/emailconfig/update',
      { emailServiceConfig: { fromCompany: 'Acme' } },
      headers,
    );
    const fetched = await post('/v2/workspace/emailconfig/get', {}, headers);
    const invalid = await post('/v2/workspace/emailconfig/update', { emailServiceConfig: {} }, headers);
    const foreign = await post('/v2/workspace/emailconfig/get', {}, other);

    expect(initial.status).toBe(200);
    expect(initial.body.result.data).toEqual({ useEmailService: false, emailServiceConfig: {} });
    expect(enabled.status).toBe(200);
    const config = enabled.body.result.data.emailServiceConfig;
    expect(enabled.body.result.data.useEmailService).toBe(true);
    expect(config).toMatchObject({
      type: 'sendgrid',
      apiKey: `${'*'.repeat(key.length - 4)}${key.slice(-4)}`,
      fromEmail: 'alerts@acme.example',
    });
    expect(config.triggers).toMatchObject({
      'comment.add': false,
      'comment_annotation.add': true,
      'huddle.create': true,
      'huddle.join': true,
    });
    expect(renamed.body.result.data).toEqual({
      useEmailService: true,
      emailServiceConfig: { ...config, fromCompany: 'Acme' },
    });
    expect(fetched.body.result.data).toEqual(renamed.body.result.data);
    for (const reply of [enabled, renamed, fetched]) expect(JSON.stringify(reply.body)).not.toContain(key);
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.status).toBe('INVALID_ARGUMENT');
    expect(foreign.body.result.data).toEqual({ useEmailService: false, emailServiceConfig: {} });
  });
});
