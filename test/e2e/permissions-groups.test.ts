/**
 * Access control over HTTP against the local stack: grant, read and remove permissions; create a group, fill it,
 * empty it; and see bad input and unknown groups answered with their documented status.
 */
import { newApiKeyHeaders as apiKeyHeaders, post } from '../support/http';

describe('permissions and user groups over HTTP', () => {
  it('adds, reads and removes permissions of a user', async () => {
    const headers = await apiKeyHeaders();
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;

    const added = await post(
      '/v2/auth/permissions/add',
      {
        user: { userId: 'user#1' },
        permissions: {
          resources: [
            { type: 'organization', id: 'acme' },
            { type: 'document', id: 'doc|1', organizationId: 'acme', accessRole: 'viewer', expiresAt },
          ],
        },
      },
      headers,
    );
    const listed = await post('/v2/auth/permissions/get', { userId: 'user#1', organizationId: 'acme' }, headers);
    const removed = await post(
      '/v2/auth/permissions/remove',
      {
        userId: 'user#1',
        permissions: {
          resources: [
            { type: 'document', id: 'doc|1', organizationId: 'acme' },
            { type: 'folder', id: 'f', organizationId: 'acme' },
          ],
        },
      },
      headers,
    );
    const after = await post('/v2/auth/permissions/get', { userId: 'user#1' }, headers);

    expect(added.status).toBe(200);
    expect(added.body).toEqual({ result: { status: 'success', message: 'Permissions added successfully.' } });
    expect(listed.body.result.data).toHaveLength(2);
    expect(listed.body.result.data).toEqual(
      expect.arrayContaining([
        { type: 'organization', id: 'acme', organizationId: 'acme', accessRole: 'editor' },
        { type: 'document', id: 'doc|1', organizationId: 'acme', accessRole: 'viewer', expiresAt },
      ]),
    );
    expect(removed.body.result.data).toEqual({
      'doc|1': { success: true, message: 'Permission removed.' },
      f: { success: false, message: 'Permission does not exist.' },
    });
    expect(after.body.result.data).toEqual([
      { type: 'organization', id: 'acme', organizationId: 'acme', accessRole: 'editor' },
    ]);
  });

  it('refuses a past expiry with 400 INVALID_ARGUMENT and writes nothing', async () => {
    const headers = await apiKeyHeaders();

    const refused = await post(
      '/v2/auth/permissions/add',
      {
        user: { userId: 'u' },
        permissions: {
          resources: [
            { type: 'organization', id: 'o' },
            { type: 'organization', id: 'p', expiresAt: 1 },
          ],
        },
      },
      headers,
    );
    const listed = await post('/v2/auth/permissions/get', { userId: 'u' }, headers);

    expect(refused.status).toBe(400);
    expect(refused.body.error.status).toBe('INVALID_ARGUMENT');
    expect(refused.body.error.details.issues).toEqual([
      { path: 'data.permissions.resources.1.expiresAt', message: expect.any(String) },
    ]);
    expect(listed.body.result.data).toEqual([]);
  });

  it('creates a group, adds users, removes one, then all', async () => {
    const headers = await apiKeyHeaders();
    const target = { organizationId: 'acme', organizationUserGroupId: 'reviewers' };

    const missingOrganization = await post(
      '/v2/organizations/usergroups/add',
      {
        organizationId: 'acme',
        organizationUserGroups: [{ groupId: 'reviewers', groupName: 'Reviewers' }],
      },
      headers,
    );
    const groups = await post(
      '/v2/organizations/usergroups/add',
      {
        organizationId: 'acme',
        createOrganization: true,
        organizationUserGroups: [{ groupId: 'reviewers', groupName: 'Reviewers' }],
      },
      headers,
    );
    const joined = await post(
      '/v2/organizations/usergroups/users/add',
      { ...target, userIds: ['ann', 'bob', 'cy'] },
      headers,
    );
    const one = await post(
      '/v2/organizations/usergroups/users/delete',
      { ...target, userIds: ['ann', 'zed'] },
      headers,
    );
    const all = await post('/v2/organizations/usergroups/users/delete', { ...target, deleteAll: true }, headers);
    const ambiguous = await post(
      '/v2/organizations/usergroups/users/delete',
      { ...target, userIds: ['bob'], deleteAll: true },
      headers,
    );
    const unknown = await post(
      '/v2/organizations/usergroups/users/delete',
      { ...target, organizationUserGroupId: 'nope', deleteAll: true },
      headers,
    );

    expect(missingOrganization.status).toBe(404);
    expect(missingOrganization.body.error).toEqual({ status: 'NOT_FOUND', message: 'Organization not found.' });
    expect(groups.body.result.data).toEqual({
      reviewers: { success: true, id: 'reviewers', message: 'User group added.' },
    });
    expect(Object.keys(joined.body.result.data)).toEqual(['ann', 'bob', 'cy']);
    expect(one.body.result.data).toEqual({
      ann: { success: true, organizationUserGroupId: 'reviewers', message: 'User removed from group.' },
      zed: { success: false, organizationUserGroupId: 'reviewers', message: 'User is not in the group.' },
    });
    expect(Object.keys(all.body.result.data)).toEqual(['bob', 'cy']);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error.status).toBe('INVALID_ARGUMENT');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({ status: 'NOT_FOUND', message: 'User group not found.' });
  });
});
