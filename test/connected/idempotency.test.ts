/** `Idempotency-Key` on every POST (docs/decisions.md §1; shared/http/idempotency.ts). */
import { randomUUID } from 'node:crypto';
import { takeViolations } from '../../local/grant-check';
import { handler as addNotification } from '../../functions/notifications/add';
import { TABLE_WRITE_ACTIONS, type Grants } from '../../shared/grants';
import { claim } from '../../shared/http/idempotency';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { invoke, invokeRoute } from '../support/invoke';
import { uniqueEmail, uniqueId } from '../support/ids';

let tenant: Tenant;
const withKey = (key: string, headers: Record<string, string> = tenant.apiKeyHeaders) => ({
  ...headers,
  'Idempotency-Key': key,
});
const notification = (organizationId: string, extra: Record<string, unknown> = {}) => ({
  organizationId,
  documentId: 'doc',
  createOrganization: true,
  createDocument: true,
  actionUser: { userId: 'actor' },
  displayHeadlineMessageTemplate: 'hello',
  notifyUsers: [{ userId: 'u' }],
  ...extra,
});
const feedOf = async (organizationId: string) =>
  (await invokeRoute('/v2/notifications/get', { organizationId, userId: 'u' }, { headers: tenant.apiKeyHeaders })).body
    .result?.data as Array<{ id: string }>;

beforeAll(async () => {
  tenant = await newTenant();
});

describe('Idempotency-Key', () => {
  it('answers a repeat with the first answer and changes nothing twice', async () => {
    const organizationId = uniqueId('org');
    const key = randomUUID();

    const first = await invokeRoute('/v2/notifications/add', notification(organizationId), { headers: withKey(key) });
    const repeat = await invokeRoute('/v2/notifications/add', notification(organizationId), { headers: withKey(key) });

    expect(first.statusCode).toBe(200);
    expect(first.headers['Idempotent-Replayed']).toBeUndefined();
    expect(repeat.statusCode).toBe(200);
    expect(repeat.body).toEqual(first.body);
    expect(repeat.headers['Idempotent-Replayed']).toBe('true');
    expect((await feedOf(organizationId)).map((n) => n.id)).toEqual([first.body.result?.data.notificationId]);
  });

  it('runs a request without the header every time', async () => {
    const organizationId = uniqueId('org');

    await invokeRoute('/v2/notifications/add', notification(organizationId), { headers: tenant.apiKeyHeaders });
    await invokeRoute('/v2/notifications/add', notification(organizationId), { headers: tenant.apiKeyHeaders });

    expect(await feedOf(organizationId)).toHaveLength(2);
  });

  it('treats the same data in another field order as the same request', async () => {
    const organizationId = uniqueId('org');
    const key = randomUUID();
    const body = notification(organizationId);
    const reordered = Object.fromEntries(Object.entries(body).reverse());

    await invokeRoute('/v2/notifications/add', body, { headers: withKey(key) });
    const repeat = await invokeRoute('/v2/notifications/add', reordered, { headers: withKey(key) });

    expect(repeat.headers['Idempotent-Replayed']).toBe('true');
  });

  it('refuses the same key with another body, and changes nothing', async () => {
    const organizationId = uniqueId('org');
    const key = randomUUID();
    await invokeRoute('/v2/notifications/add', notification(organizationId), { headers: withKey(key) });

    const other = await invokeRoute(
      '/v2/notifications/add',
      notification(organizationId, { displayBodyMessage: 'changed' }),
      { headers: withKey(key) },
    );

    expect(other.statusCode).toBe(400);
    expect(other.body.error).toEqual({
      status: 'INVALID_ARGUMENT',
      message: 'Idempotency-Key was already used with a different request.',
    });
    expect(await feedOf(organizationId)).toHaveLength(1);
  });

  it('answers ABORTED with Retry-After while the first request is still running', async () => {
    const organizationId = uniqueId('org');
    const key = randomUUID();
    const data = notification(organizationId);
    await claim('/v2/notifications/add', { scope: `apiKey:${tenant.apiKeyId}`, key, data }, 30_000, 'first');

    const second = await invokeRoute('/v2/notifications/add', data, { headers: withKey(key) });

    expect(second.statusCode).toBe(409);
    expect(second.body.error?.status).toBe('ABORTED');
    expect(second.headers['Retry-After']).toBe('1');
    expect(await feedOf(organizationId)).toEqual([]);
  });

  it('replays a 4xx answer, even after what caused it has changed', async () => {
    const organizationId = uniqueId('org');
    const key = randomUUID();
    const withoutCreate = notification(organizationId, { createOrganization: false });

    const first = await invokeRoute('/v2/notifications/add', withoutCreate, { headers: withKey(key) });
    await invokeRoute(
      '/v2/organizations/documents/add',
      { organizationId, createOrganization: true, documents: [{ documentId: 'doc' }] },
      { headers: tenant.apiKeyHeaders },
    );
    const repeat = await invokeRoute('/v2/notifications/add', withoutCreate, { headers: withKey(key) });

    expect(first.statusCode).toBe(404);
    expect(repeat.statusCode).toBe(404);
    expect(repeat.headers['Idempotent-Replayed']).toBe('true');
  });

  it('keeps no 5xx answer: the retry runs again', async () => {
    const organizationId = uniqueId('org');
    const key = randomUUID();
    // The notification's own write fails (no PutItem on the table); the idempotency records may still be written.
    const failing: Grants = {
      tableActions: TABLE_WRITE_ACTIONS.filter((action) => action !== 'dynamodb:PutItem'),
      idempotencyActions: ['dynamodb:PutItem'],
      indexes: [],
      kmsActions: [],
      queueActions: [],
      sesActions: [],
      connectionActions: [],
    };

    const failed = await invoke(addNotification, '/v2/notifications/add', notification(organizationId), {
      headers: withKey(key),
      grants: failing,
    });
    takeViolations();
    const retried = await invokeRoute('/v2/notifications/add', notification(organizationId), { headers: withKey(key) });

    expect(failed.statusCode).toBe(500);
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['Idempotent-Replayed']).toBeUndefined();
    expect(await feedOf(organizationId)).toHaveLength(1);
  });

  it("keeps one caller's keys apart from another API key's, of the same workspace", async () => {
    const organizationId = uniqueId('org');
    const key = randomUUID();
    const sibling = await siblingKey(tenant);
    await invokeRoute('/v2/notifications/add', notification(organizationId), { headers: withKey(key) });

    const other = await invokeRoute('/v2/notifications/add', notification(organizationId), {
      headers: withKey(key, sibling),
    });

    expect(other.statusCode).toBe(200);
    expect(other.headers['Idempotent-Replayed']).toBeUndefined();
  });

  it('replays Create Workspace per source IP: one workspace, the same answer', async () => {
    const key = randomUUID();
    const body = { ownerEmail: uniqueEmail() };

    const first = await invokeRoute('/v2/workspace/create', body, {
      headers: { 'Idempotency-Key': key },
      sourceIp: '203.0.113.7',
    });
    const repeat = await invokeRoute('/v2/workspace/create', body, {
      headers: { 'Idempotency-Key': key },
      sourceIp: '203.0.113.7',
    });
    const elsewhere = await invokeRoute('/v2/workspace/create', body, {
      headers: { 'Idempotency-Key': key },
      sourceIp: '203.0.113.8',
    });

    expect(repeat.body.result?.data.id).toBe(first.body.result?.data.id);
    expect(repeat.headers['Idempotent-Replayed']).toBe('true');
    expect(elsewhere.headers['Idempotent-Replayed']).toBeUndefined();
  });

  it('replays a read-only operation under its read-only grants', async () => {
    const key = randomUUID();

    const first = await invokeRoute('/v2/users/get', { organizationId: 'o' }, { headers: withKey(key) });
    const repeat = await invokeRoute('/v2/users/get', { organizationId: 'o' }, { headers: withKey(key) });

    expect(first.statusCode).toBe(200);
    expect(repeat.headers['Idempotent-Replayed']).toBe('true');
    expect(repeat.body).toEqual(first.body);
  });

  it.each([
    ['an empty key', ''],
    ['a key of 256 characters', 'k'.repeat(256)],
    ['a key with a character outside printable ASCII', 'clé'],
  ])('refuses %s with INVALID_ARGUMENT', async (_, key) => {
    const response = await invokeRoute('/v2/users/get', { organizationId: 'o' }, { headers: withKey(key) });

    expect(response.statusCode).toBe(400);
    expect(response.body.error?.message).toBe('Idempotency-Key must be 1 to 255 printable ASCII characters.');
  });
});
