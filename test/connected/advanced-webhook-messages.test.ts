/**
 * The message, attempt, resend and recover operations' answers to bad input, to a tenant without advanced
 * webhooks, and to ids that are unknown or another API key's. What they answer for real deliveries is in
 * webhook-delivery.test.ts, which runs the event pipeline.
 */
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { routeCaller } from '../support/invoke';

const MESSAGES = '/v2/workspace/advancedwebhook/messages/get';
const ATTEMPTS = '/v2/workspace/advancedwebhook/attempts/get';
const RESEND = '/v2/workspace/advancedwebhook/messages/resend';
const RECOVER = '/v2/workspace/advancedwebhook/endpoints/recover';
const NOT_ENABLED =
  'Advanced webhooks are not enabled. Enable them with /v2/workspace/advancedwebhookconfig/update {"isEnabled": true}.';

let tenant: Tenant;
const call = routeCaller(() => tenant);

beforeEach(async () => {
  tenant = await newTenant();
});

async function enableWithEndpoint(): Promise<string> {
  await call('/v2/workspace/advancedwebhookconfig/update', { isEnabled: true });
  const created = await call('/v2/workspace/advancedwebhook/endpoints/create', { url: 'https://hooks.example.com/x' });
  return created.body.result?.data.id as string;
}

describe('advanced webhook messages and attempts', () => {
  it.each([
    [MESSAGES, {}],
    [ATTEMPTS, { endpointId: 'ep_x' }],
    [RESEND, { messageId: 'msg_x', endpointId: 'ep_x' }],
    [RECOVER, { endpointId: 'ep_x', since: Date.now() - 1000 }],
  ])('%s answers FAILED_PRECONDITION while advanced webhooks are not enabled', async (path, data) => {
    const response = await call(path, data);

    expect(response.statusCode).toBe(400);
    expect(response.body.error).toMatchObject({ status: 'FAILED_PRECONDITION', message: NOT_ENABLED });
  });

  it('lists no messages before any event, and answers an empty page without a token', async () => {
    await enableWithEndpoint();

    const response = await call(MESSAGES, { pageSize: 10 });

    expect(response.body.result).toEqual({
      status: 'success',
      message: 'Advanced webhook messages retrieved successfully.',
      data: [],
    });
  });

  it.each([
    [MESSAGES, { pageSize: 0 }, 'data.pageSize'],
    [MESSAGES, { pageSize: 251 }, 'data.pageSize'],
    [MESSAGES, { eventTypes: [] }, 'data.eventTypes'],
    [MESSAGES, { since: -1 }, 'data.since'],
    [MESSAGES, { since: 'yesterday' }, 'data.since'],
    [MESSAGES, { organizationId: 42 }, 'data.organizationId'],
    [ATTEMPTS, { messageId: '' }, 'data.messageId'],
    [RESEND, { messageId: 'msg_x' }, 'data.endpointId'],
    [RESEND, { endpointId: 'ep_x' }, 'data.messageId'],
    [RECOVER, { endpointId: 'ep_x' }, 'data.since'],
    [RECOVER, { since: 1 }, 'data.endpointId'],
    [RECOVER, { endpointId: 'ep_x', since: 1.5 }, 'data.since'],
  ])('%s refuses %j naming %s', async (path, data, field) => {
    await enableWithEndpoint();

    const response = await call(path, data);

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    expect(JSON.stringify(response.body.error?.details)).toContain(field);
  });

  it('refuses attempts/get without a message or an endpoint', async () => {
    await enableWithEndpoint();

    const response = await call(ATTEMPTS, {});

    expect(response.body.error).toMatchObject({ status: 'INVALID_ARGUMENT' });
    expect(JSON.stringify(response.body.error)).toContain('Provide messageId, endpointId or both.');
  });

  it('refuses a recover window that starts more than 14 days back or ends before it starts, recovering nothing', async () => {
    const endpointId = await enableWithEndpoint();
    const now = Date.now();

    const tooOld = await call(RECOVER, { endpointId, since: now - 15 * 24 * 60 * 60 * 1000 });
    const backwards = await call(RECOVER, { endpointId, since: now - 1000, until: now - 2000 });
    const fine = await call(RECOVER, { endpointId, since: now - 1000 });

    expect(tooOld.body.error).toEqual({ status: 'INVALID_ARGUMENT', message: 'since must be at most 14 days ago.' });
    expect(backwards.body.error).toEqual({ status: 'INVALID_ARGUMENT', message: 'until must not be before since.' });
    expect(fine.body.result?.data).toEqual({ endpointId, recovered: 0 });
  });

  it('answers NOT_FOUND for unknown messages and endpoints, and for those of another API key', async () => {
    const endpointId = await enableWithEndpoint();
    const others = [await siblingKey(tenant), (await newTenant()).apiKeyHeaders];

    expect((await call(ATTEMPTS, { messageId: 'msg_unknown' })).body.error).toEqual({
      status: 'NOT_FOUND',
      message: 'Message not found.',
    });
    expect((await call(RESEND, { messageId: 'msg_unknown', endpointId })).body.error).toEqual({
      status: 'NOT_FOUND',
      message: 'Message not found.',
    });
    expect((await call(MESSAGES, { endpointId: 'ep_unknown' })).body.error).toEqual({
      status: 'NOT_FOUND',
      message: 'Endpoint not found.',
    });
    for (const other of others) {
      await call('/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, other);
      expect((await call(ATTEMPTS, { endpointId }, other)).body.error).toEqual({
        status: 'NOT_FOUND',
        message: 'Endpoint not found.',
      });
      expect((await call(RECOVER, { endpointId, since: Date.now() - 1000 }, other)).body.error).toEqual({
        status: 'NOT_FOUND',
        message: 'Endpoint not found.',
      });
      expect((await call(MESSAGES, { endpointId }, other)).body.error).toEqual({
        status: 'NOT_FOUND',
        message: 'Endpoint not found.',
      });
    }
  });
});
