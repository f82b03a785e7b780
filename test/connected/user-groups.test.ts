import { handler as addGroupsHandler } from '../../functions/usergroups/add';
import { handler as addUsersHandler } from '../../functions/usergroups/users-add';
import { handler as deleteUsersHandler } from '../../functions/usergroups/users-delete';
import { batchWrite, putRequest } from '../../shared/db/batch';
import { userEntriesInOrganization } from '../../shared/db/membership';
import { organizationExists } from '../../shared/db/organization';
import {
  getGroup,
  groupMemberItem,
  groupMemberKey,
  groupMembersAmong,
  queryGroupMembers,
} from '../../shared/db/user-group';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint } from '../support/invoke';
import { uniqueId } from '../support/ids';

const addGroups = endpoint(addGroupsHandler, '/v2/organizations/usergroups/add');
const addUsers = endpoint(addUsersHandler, '/v2/organizations/usergroups/users/add');
const deleteUsers = endpoint(deleteUsersHandler, '/v2/organizations/usergroups/users/delete');

/** Every member of the group, read from the table. */
async function members(tenant: Tenant, organizationId: string, groupId: string): Promise<string[]> {
  return (await queryGroupMembers(tenant.apiKeyId, organizationId, groupId, 10_000)).userIds;
}

function expectInvalid(response: Awaited<ReturnType<typeof addGroups>>, path: string) {
  expect(response.statusCode).toBe(400);
  expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
  expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path)).toContain(path);
}

function expectNotFound(response: Awaited<ReturnType<typeof addGroups>>, message: string) {
  expect(response.statusCode).toBe(404);
  expect(response.body.error).toEqual({ status: 'NOT_FOUND', message });
}

let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
});

/** An organization with one group, made through the API. */
async function groupIn(organizationId = uniqueId('org'), groupId = uniqueId('group')) {
  const created = await addGroups(tenant.apiKeyHeaders, {
    organizationId,
    createOrganization: true,
    organizationUserGroups: [{ groupId, groupName: 'Reviewers' }],
  });
  if (created.statusCode !== 200) throw new Error(`group not created: ${JSON.stringify(created.body)}`);
  return { organizationId, groupId };
}

describe('add user groups', () => {
  it('creates the organization when asked and reports each group keyed by groupId', async () => {
    const organizationId = uniqueId('org');

    const response = await addGroups(tenant.apiKeyHeaders, {
      organizationId,
      createOrganization: true,
      organizationUserGroups: [
        { groupId: 'g1', groupName: 'One' },
        { groupId: 'g2', groupName: 'Two' },
      ],
    });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual({
      g1: { success: true, id: 'g1', message: 'User group added.' },
      g2: { success: true, id: 'g2', message: 'User group added.' },
    });
    expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(true);
    expect(await getGroup(tenant.apiKeyId, organizationId, 'g2')).toEqual({
      organizationId,
      groupId: 'g2',
      groupName: 'Two',
    });
  });

  it('adds groups to an existing organization without createOrganization', async () => {
    const { organizationId } = await groupIn();

    const response = await addGroups(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroups: [{ groupId: 'later', groupName: 'Later' }],
    });

    expect(response.statusCode).toBe(200);
    expect(await getGroup(tenant.apiKeyId, organizationId, 'later')).toBeDefined();
  });

  it('renames an existing group and keeps its members', async () => {
    const { organizationId, groupId } = await groupIn();
    await addUsers(tenant.apiKeyHeaders, { organizationId, organizationUserGroupId: groupId, userIds: ['u1'] });

    const response = await addGroups(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroups: [{ groupId, groupName: 'Renamed' }],
    });

    expect(response.body.result?.data[groupId]).toEqual({ success: true, id: groupId, message: 'User group added.' });
    expect((await getGroup(tenant.apiKeyId, organizationId, groupId))?.groupName).toBe('Renamed');
    expect(await members(tenant, organizationId, groupId)).toEqual(['u1']);
  });

  it('writes 100 groups in one request', async () => {
    const organizationId = uniqueId('org');
    const groups = Array.from({ length: 100 }, (_, i) => ({ groupId: `g${i}`, groupName: `Group ${i}` }));

    const response = await addGroups(tenant.apiKeyHeaders, {
      organizationId,
      createOrganization: true,
      organizationUserGroups: groups,
    });

    expect(Object.keys(response.body.result?.data)).toHaveLength(100);
    expect(await getGroup(tenant.apiKeyId, organizationId, 'g99')).toBeDefined();
  });

  it.each([
    ['createOrganization omitted', {}],
    ['createOrganization false', { createOrganization: false }],
  ])('returns NOT_FOUND for a missing organization with %s and writes nothing', async (_, extra) => {
    const organizationId = uniqueId('org');

    const response = await addGroups(tenant.apiKeyHeaders, {
      organizationId,
      ...extra,
      organizationUserGroups: [{ groupId: 'g', groupName: 'G' }],
    });

    expectNotFound(response, 'Organization not found.');
    expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
    expect(await getGroup(tenant.apiKeyId, organizationId, 'g')).toBeUndefined();
  });

  const group = { groupId: 'g', groupName: 'G' };
  it.each([
    ['a missing organizationId', { organizationId: undefined, organizationUserGroups: [group] }, 'data.organizationId'],
    ['a numeric organizationId', { organizationId: 5, organizationUserGroups: [group] }, 'data.organizationId'],
    [
      'a string createOrganization',
      { createOrganization: 'yes', organizationUserGroups: [group] },
      'data.createOrganization',
    ],
    ['missing organizationUserGroups', {}, 'data.organizationUserGroups'],
    ['empty organizationUserGroups', { organizationUserGroups: [] }, 'data.organizationUserGroups'],
    ['an object for organizationUserGroups', { organizationUserGroups: group }, 'data.organizationUserGroups'],
    [
      '101 groups',
      { organizationUserGroups: Array.from({ length: 101 }, (_, i) => ({ groupId: `g${i}`, groupName: 'G' })) },
      'data.organizationUserGroups',
    ],
    [
      'a repeated groupId',
      { organizationUserGroups: [group, { groupId: 'g', groupName: 'Other' }] },
      'data.organizationUserGroups',
    ],
    ['a missing groupId', { organizationUserGroups: [{ groupName: 'G' }] }, 'data.organizationUserGroups.0.groupId'],
    ['a missing groupName', { organizationUserGroups: [{ groupId: 'g' }] }, 'data.organizationUserGroups.0.groupName'],
    [
      'an empty groupName',
      { organizationUserGroups: [{ groupId: 'g', groupName: '' }] },
      'data.organizationUserGroups.0.groupName',
    ],
    [
      'a groupName of 201 characters',
      { organizationUserGroups: [{ groupId: 'g', groupName: 'n'.repeat(201) }] },
      'data.organizationUserGroups.0.groupName',
    ],
    [
      'a groupId of 257 characters',
      { organizationUserGroups: [{ groupId: 'g'.repeat(257), groupName: 'G' }] },
      'data.organizationUserGroups.0.groupId',
    ],
  ])('refuses %s with INVALID_ARGUMENT and writes nothing', async (_, data, path) => {
    const organizationId = uniqueId('org');

    const response = await addGroups(tenant.apiKeyHeaders, { organizationId, createOrganization: true, ...data });

    expectInvalid(response, path);
    expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
  });
});

describe('add users to a group', () => {
  it('adds each user, keyed by userId, and indexes the membership under the user in the organization', async () => {
    const { organizationId, groupId } = await groupIn();

    const response = await addUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: groupId,
      userIds: ['u1', 'u2'],
    });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual({
      u1: { success: true, organizationUserGroupId: groupId, message: 'User added to group.' },
      u2: { success: true, organizationUserGroupId: groupId, message: 'User added to group.' },
    });
    expect(await members(tenant, organizationId, groupId)).toEqual(['u1', 'u2']);
    // Removing the user from the organization finds group memberships through this index (shared/db/membership.ts).
    expect(await userEntriesInOrganization(tenant.apiKeyId, organizationId, 'u1')).toEqual([
      groupMemberKey(tenant.apiKeyId, organizationId, groupId, 'u1'),
    ]);
  });

  it('adds a user already in the group again without duplicating it', async () => {
    const { organizationId, groupId } = await groupIn();
    await addUsers(tenant.apiKeyHeaders, { organizationId, organizationUserGroupId: groupId, userIds: ['u1'] });

    const response = await addUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: groupId,
      userIds: ['u1', 'u2'],
    });

    expect(response.body.result?.data.u1.success).toBe(true);
    expect(await members(tenant, organizationId, groupId)).toEqual(['u1', 'u2']);
  });

  it('returns NOT_FOUND for an unknown group, also one of another organization, and writes nothing', async () => {
    const { organizationId, groupId } = await groupIn();
    const other = await groupIn();

    const unknown = await addUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: 'nope',
      userIds: ['u1'],
    });
    const elsewhere = await addUsers(tenant.apiKeyHeaders, {
      organizationId: other.organizationId,
      organizationUserGroupId: groupId,
      userIds: ['u1'],
    });

    expectNotFound(unknown, 'User group not found.');
    expectNotFound(elsewhere, 'User group not found.');
    expect(await members(tenant, organizationId, 'nope')).toEqual([]);
    expect(await members(tenant, other.organizationId, groupId)).toEqual([]);
  });

  type Target = { organizationId: string; groupId: string };
  const existing = ({ organizationId, groupId }: Target) => ({ organizationId, organizationUserGroupId: groupId });
  it.each<[string, (target: Target) => unknown, string]>([
    [
      'a missing organizationId',
      ({ groupId }) => ({ organizationUserGroupId: groupId, userIds: ['u'] }),
      'data.organizationId',
    ],
    [
      'a missing organizationUserGroupId',
      ({ organizationId }) => ({ organizationId, userIds: ['u'] }),
      'data.organizationUserGroupId',
    ],
    ['missing userIds', (target) => existing(target), 'data.userIds'],
    ['a string userIds', (target) => ({ ...existing(target), userIds: 'u' }), 'data.userIds'],
    ['empty userIds', (target) => ({ ...existing(target), userIds: [] }), 'data.userIds'],
    ['a numeric userId', (target) => ({ ...existing(target), userIds: [1] }), 'data.userIds.0'],
    ['a repeated userId', (target) => ({ ...existing(target), userIds: ['u', 'u'] }), 'data.userIds'],
    [
      '101 userIds',
      (target) => ({ ...existing(target), userIds: Array.from({ length: 101 }, (_, i) => `u${i}`) }),
      'data.userIds',
    ],
  ])('refuses %s with INVALID_ARGUMENT and writes nothing', async (_, body, path) => {
    const target = await groupIn();

    const response = await addUsers(tenant.apiKeyHeaders, body(target));

    expectInvalid(response, path);
    expect(await members(tenant, target.organizationId, target.groupId)).toEqual([]);
  });
});

describe('delete users from a group', () => {
  async function groupWith(userIds: string[]) {
    const target = await groupIn();
    await addUsers(tenant.apiKeyHeaders, {
      organizationId: target.organizationId,
      organizationUserGroupId: target.groupId,
      userIds,
    });
    return target;
  }

  it('removes the listed members and reports the others as not in the group', async () => {
    const { organizationId, groupId } = await groupWith(['u1', 'u2', 'u3']);

    const response = await deleteUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: groupId,
      userIds: ['u1', 'u3', 'stranger'],
    });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual({
      u1: { success: true, organizationUserGroupId: groupId, message: 'User removed from group.' },
      u3: { success: true, organizationUserGroupId: groupId, message: 'User removed from group.' },
      stranger: { success: false, organizationUserGroupId: groupId, message: 'User is not in the group.' },
    });
    expect(await members(tenant, organizationId, groupId)).toEqual(['u2']);
    expect(await userEntriesInOrganization(tenant.apiKeyId, organizationId, 'u1')).toEqual([]);
  });

  it('accepts userIds with deleteAll false', async () => {
    const { organizationId, groupId } = await groupWith(['u1', 'u2']);

    const response = await deleteUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: groupId,
      userIds: ['u1'],
      deleteAll: false,
    });

    expect(response.body.result?.data.u1.success).toBe(true);
    expect(await members(tenant, organizationId, groupId)).toEqual(['u2']);
  });

  it('removes every member with deleteAll, paging through a group larger than one page, and reports each', async () => {
    const { organizationId, groupId } = await groupIn();
    const userIds = Array.from({ length: 1203 }, (_, i) => `user-${String(i).padStart(4, '0')}`);
    await batchWrite(
      userIds.map((userId) => putRequest(groupMemberItem(tenant.apiKeyId, organizationId, groupId, userId))),
    );

    const response = await deleteUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: groupId,
      deleteAll: true,
    });

    expect(response.statusCode).toBe(200);
    expect(Object.keys(response.body.result?.data).sort()).toEqual(userIds);
    expect(response.body.result?.data['user-1202']).toEqual({
      success: true,
      organizationUserGroupId: groupId,
      message: 'User removed from group.',
    });
    expect(await members(tenant, organizationId, groupId)).toEqual([]);
    expect(await getGroup(tenant.apiKeyId, organizationId, groupId)).toBeDefined();
  });

  it('answers an empty result for deleteAll on an empty group', async () => {
    const { organizationId, groupId } = await groupIn();

    const response = await deleteUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: groupId,
      deleteAll: true,
    });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual({});
  });

  it.each([
    ['userIds', { userIds: ['u1'] }],
    ['deleteAll', { deleteAll: true }],
  ])('returns NOT_FOUND when the group does not exist (%s)', async (_, target) => {
    const { organizationId, groupId } = await groupWith(['u1']);
    const other = await groupIn();

    const unknown = await deleteUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: 'nope',
      ...target,
    });
    const elsewhere = await deleteUsers(tenant.apiKeyHeaders, {
      organizationId: other.organizationId,
      organizationUserGroupId: groupId,
      ...target,
    });

    expectNotFound(unknown, 'User group not found.');
    expectNotFound(elsewhere, 'User group not found.');
    expect(await members(tenant, organizationId, groupId)).toEqual(['u1']);
  });

  it.each([
    ['neither userIds nor deleteAll', {}, 'data'],
    ['deleteAll false alone', { deleteAll: false }, 'data'],
    ['both userIds and deleteAll true', { userIds: ['u1'], deleteAll: true }, 'data'],
    ['empty userIds', { userIds: [] }, 'data.userIds'],
    ['empty userIds with deleteAll true', { userIds: [], deleteAll: true }, 'data.userIds'],
    ['a string deleteAll', { deleteAll: 'true' }, 'data.deleteAll'],
    ['a repeated userId', { userIds: ['u1', 'u1'] }, 'data.userIds'],
    ['101 userIds', { userIds: Array.from({ length: 101 }, (_, i) => `u${i}`) }, 'data.userIds'],
    ['a numeric userId', { userIds: [1] }, 'data.userIds.0'],
  ])('refuses %s with INVALID_ARGUMENT and removes nothing', async (_, target, path) => {
    const { organizationId, groupId } = await groupWith(['u1', 'u2']);

    const response = await deleteUsers(tenant.apiKeyHeaders, {
      organizationId,
      organizationUserGroupId: groupId,
      ...target,
    });

    expectInvalid(response, path);
    expect(await members(tenant, organizationId, groupId)).toEqual(['u1', 'u2']);
  });

  it.each([
    ['a missing organizationId', { organizationUserGroupId: 'g', deleteAll: true }, 'data.organizationId'],
    ['a missing organizationUserGroupId', { organizationId: 'o', deleteAll: true }, 'data.organizationUserGroupId'],
  ])('refuses %s with INVALID_ARGUMENT', async (_, data, path) => {
    expectInvalid(await deleteUsers(tenant.apiKeyHeaders, data), path);
  });
});

describe('ids with separators, unicode and maximum length', () => {
  const tricky = [
    'g#1',
    'a|b',
    '100%',
    '~x',
    'USER#x',
    'GROUP#g',
    'U#u',
    'émoji 🎉 名前',
    'x'.repeat(256),
    'x'.repeat(255) + 'y',
  ];

  it('keeps groups, members and organizations with look-alike ids apart', async () => {
    const own = await newTenant();
    const headers = own.apiKeyHeaders;
    // The member partition of group `x` in organization `o` would read ORG#o#GROUP#x without encoding, which is
    // also how organization `o#GROUP#x` would begin.
    const organizations = ['o', 'o#GROUP#x', ...tricky];
    const name = (organizationIndex: number, groupIndex: number) =>
      `group ${groupIndex} of organization ${organizationIndex}`;
    for (const [i, organizationId] of organizations.entries()) {
      const groups = tricky.map((groupId, j) => ({ groupId, groupName: name(i, j) }));
      const created = await addGroups(headers, {
        organizationId,
        createOrganization: true,
        organizationUserGroups: [...groups, { groupId: 'x', groupName: 'x' }],
      });
      expect(created.statusCode).toBe(200);
    }

    const added = await addUsers(headers, { organizationId: 'o', organizationUserGroupId: 'x', userIds: tricky });
    const removed = await deleteUsers(headers, {
      organizationId: 'o',
      organizationUserGroupId: 'x',
      userIds: tricky.slice(0, 5),
    });

    expect(Object.keys(added.body.result?.data).sort()).toEqual([...tricky].sort());
    expect(Object.values(removed.body.result?.data).every((item) => (item as { success: boolean }).success)).toBe(true);
    expect((await members(own, 'o', 'x')).sort()).toEqual(tricky.slice(5).sort());
    for (const [i, organizationId] of organizations.entries()) {
      for (const [j, groupId] of tricky.entries()) {
        expect((await getGroup(own.apiKeyId, organizationId, groupId))?.groupName).toBe(name(i, j));
        expect(await members(own, organizationId, groupId)).toEqual([]);
      }
    }
    expect(await members(own, 'o#GROUP#x', 'x')).toEqual([]);
    const stillIn = await groupMembersAmong(own.apiKeyId, 'o', 'x', tricky);
    expect([...stillIn].sort()).toEqual(tricky.slice(5).sort());
  });
});

describe('tenancy', () => {
  it('lets neither a sibling key nor another workspace see, change or delete the groups of a key', async () => {
    const { organizationId, groupId } = await groupIn();
    await addUsers(tenant.apiKeyHeaders, { organizationId, organizationUserGroupId: groupId, userIds: ['u1'] });
    const others = [await siblingKey(tenant), (await newTenant()).apiKeyHeaders];

    for (const headers of others) {
      const rename = await addGroups(headers, {
        organizationId,
        organizationUserGroups: [{ groupId, groupName: 'Hijacked' }],
      });
      const join = await addUsers(headers, { organizationId, organizationUserGroupId: groupId, userIds: ['intruder'] });
      const evict = await deleteUsers(headers, { organizationId, organizationUserGroupId: groupId, userIds: ['u1'] });
      const wipe = await deleteUsers(headers, { organizationId, organizationUserGroupId: groupId, deleteAll: true });
      const ownCopy = await addGroups(headers, {
        organizationId,
        createOrganization: true,
        organizationUserGroups: [{ groupId, groupName: 'Theirs' }],
      });

      expectNotFound(rename, 'Organization not found.');
      expectNotFound(join, 'User group not found.');
      expectNotFound(evict, 'User group not found.');
      expectNotFound(wipe, 'User group not found.');
      expect(ownCopy.statusCode).toBe(200);
    }

    expect(await getGroup(tenant.apiKeyId, organizationId, groupId)).toEqual({
      organizationId,
      groupId,
      groupName: 'Reviewers',
    });
    expect(await members(tenant, organizationId, groupId)).toEqual(['u1']);
  });
});
