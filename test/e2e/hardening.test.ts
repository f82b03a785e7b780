/** Well-formed input and Idempotency-Key over HTTP, through the local gateway (docs/decisions.md §1). */
import { randomUUID } from 'node:crypto';
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

let headers: Record<string, string>;

beforeAll(async () => {
  headers = await newApiKeyHeaders();
});

describe('over HTTP', () => {
  it('answers 5,000 levels of nesting with INVALID_ARGUMENT before authentication', async () => {
    const reply = await post('/v2/users/get', undefined, {}, `{"data":${'['.repeat(5000)}${']'.repeat(5000)}}`);

    expect(reply.status).toBe(400);
    expect(reply.body.error.status).toBe('INVALID_ARGUMENT');
  });

  it('refuses bytes that are not UTF-8: the gateway hands them over unchanged', async () => {
    const rawBody = Buffer.concat([
      Buffer.from('{"data":{"organizationId":"o'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}}'),
    ]);

    const reply = await post('/v2/organizations/documents/get', undefined, headers, rawBody);

    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toBe('Request body is not valid UTF-8.');
  });

  it('replays a request sent again with the same Idempotency-Key', async () => {
    const data = {
      organizationId: uniqueId('org'),
      documentId: 'doc',
      createOrganization: true,
      createDocument: true,
      actionUser: { userId: 'ann' },
      displayHeadlineMessageTemplate: 'hi',
      notifyUsers: [{ userId: 'bob' }],
    };
    const key = { ...headers, 'Idempotency-Key': randomUUID() };

    const first = await post('/v2/notifications/add', data, key);
    const again = await post('/v2/notifications/add', data, key);
    const feed = await post('/v2/notifications/get', { organizationId: data.organizationId, userId: 'bob' }, headers);

    expect(first.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(feed.body.result.data).toHaveLength(1);
  });
});
