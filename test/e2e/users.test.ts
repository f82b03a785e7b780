/** Users over HTTP against the local stack: add at two levels, list, update, delete. */
import { newApiKeyHeaders as apiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('users over HTTP', () => {
  it('adds, lists, updates and deletes users', async () => {
    const headers = await apiKeyHeaders();
    const organizationId = uniqueId('org');

    const added = await post(
      '/v2/users/add',
      { organizationId, users: [{ userId: 'u1', name: 'Ann' }, { userId: 'u2' }] },
      headers,
    );
    await post(
      '/v2/users/add',
      { organizationId, documentId: 'd1', createDocument: true, users: [{ userId: 'u3' }] },
      headers,
    );
    const orgUsers = await post('/v2/users/get', { organizationId, pageSize: 1 }, headers);
    const next = await post(
      '/v2/users/get',
      { organizationId, pageSize: 1, pageToken: orgUsers.body.result.nextPageToken },
      headers,
    );
    const updated = await post(
      '/v2/users/update',
      { organizationId, users: [{ userId: 'u2', name: 'Bo' }, { userId: 'u3' }] },
      headers,
    );
    const deleted = await post('/v1/users/delete', { organizationId, userIds: ['u1'] }, headers);
    const after = await post('/v2/users/get', { organizationId }, headers);

    expect(added.status).toBe(200);
    expect(orgUsers.body.result.data).toEqual([{ userId: 'u1', name: 'Ann', initial: 'A', accessRole: 'editor' }]);
    expect(next.body.result.data.map((u: { userId: string }) => u.userId)).toEqual(['u2']);
    expect(next.body.result.nextPageToken).toBeUndefined();
    expect(updated.body.result.data.u3.success).toBe(false);
    expect(deleted.body.result.data.u1.success).toBe(true);
    expect(after.body.result.data).toEqual([{ userId: 'u2', name: 'Bo', initial: 'B', accessRole: 'editor' }]);
  });
});
