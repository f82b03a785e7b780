/** Advanced webhook endpoints over HTTP against the local stack: the whole life of one endpoint, KMS included. */
import { newApiKeyHeaders, post } from '../support/http';

const BASE = '/v2/workspace/advancedwebhook/endpoints';

describe('advanced webhook endpoints over HTTP', () => {
  it('refuses until enabled, then creates, lists, updates, rotates the secret, reads it and deletes the endpoint', async () => {
    const headers = await newApiKeyHeaders();

    const refused = await post(`${BASE}/create`, { url: 'https://hooks.example.com/e2e' }, headers);
    await post('/v2/workspace/advancedwebhookconfig/update', { isEnabled: true }, headers);
    const created = await post(
      `${BASE}/create`,
      { url: 'https://hooks.example.com/e2e', filterTypes: ['comment.add'], uid: 'e2e', secret: 'whsec_ignored' },
      headers,
    );
    const id: string = created.body.result.data.id;
    const listed = await post(`${BASE}/get`, {}, headers);
    const updated = await post(
      `${BASE}/update`,
      { endpointId: id, filterTypes: null, description: 'all events' },
      headers,
    );
    const first = await post(`${BASE}/secret/get`, { endpointId: id }, headers);
    const rotated = await post(`${BASE}/secret/rotate`, { endpointId: id }, headers);
    const afterRotation = await post(`${BASE}/secret/get`, { endpointId: id }, headers);
    const deleted = await post(`${BASE}/delete`, { endpointId: id }, headers);
    const gone = await post(`${BASE}/secret/get`, { endpointId: id }, headers);
    const empty = await post(`${BASE}/get`, {}, headers);

    expect(refused.status).toBe(400);
    expect(refused.body.error.status).toBe('FAILED_PRECONDITION');
    expect(created.status).toBe(200);
    expect(created.body.result.data).toMatchObject({
      url: 'https://hooks.example.com/e2e',
      filterTypes: ['comment.add'],
      uid: 'e2e',
      disabled: false,
      metadata: null,
    });
    expect(JSON.stringify(created.body)).not.toContain('whsec_');
    expect(listed.body.result.data).toEqual({
      endpoints: [created.body.result.data],
      iterator: id,
      prevIterator: `-${id}`,
      done: true,
    });
    expect(updated.body.result.data).toMatchObject({ id, filterTypes: null, description: 'all events', uid: 'e2e' });
    expect(first.body.result.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(rotated.body.result.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(rotated.body.result.data.secret).not.toBe(first.body.result.data.secret);
    expect(afterRotation.body.result.data).toEqual({ endpointId: id, secret: rotated.body.result.data.secret });
    expect(deleted.body.result.data).toEqual({ endpointId: id, deleted: true });
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toBe('Endpoint not found.');
    expect(empty.body.result.data.endpoints).toEqual([]);
  });
});
