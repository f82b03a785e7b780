/**
 * No partial writes (docs/api.md "Partial failures"): an operation that writes in several steps either stores all it
 * answers success for, or nothing; batch operations per item. Each test stops one operation between two of its
 * steps with an injected storage fault (test/support/faults.ts) and compares the answer with what is stored.
 */
import { organizationExists } from '../../shared/db/organization';
import { groupMembersAmong, getGroup } from '../../shared/db/user-group';
import { withFault, type Fault } from '../support/faults';
import { newTenant, type Tenant } from '../support/fixtures';
import { uniqueId } from '../support/ids';
import { routeCaller, type Invocation } from '../support/invoke';

let tenant: Tenant;
beforeAll(async () => {
  tenant = await newTenant();
});

const send = routeCaller(() => tenant);
const failing = (fault: Fault, path: string, data: unknown) => withFault(fault, () => send(path, data));
const newOrg = () => uniqueId('org');
const range = (n: number, label: string) =>
  Array.from({ length: n }, (_, i) => `${label}-${String(i).padStart(3, '0')}`);
const NOT_WRITTEN = 'Not written, the request stopped part way: Internal error.';

/** The ids a batch answer reports written, and those it reports not written. */
function split(response: Invocation): { written: string[]; notWritten: string[] } {
  const entries = Object.entries(response.body.result?.data as Record<string, { success: boolean; message: string }>);
  return {
    written: entries
      .filter(([, item]) => item.success)
      .map(([id]) => id)
      .sort(),
    notWritten: entries
      .filter(([, item]) => item.message === NOT_WRITTEN)
      .map(([id]) => id)
      .sort(),
  };
}

const second = { command: 'TransactWriteItems', nth: 2 };
const first = { command: 'TransactWriteItems', nth: 1 };

async function userIdsAt(level: Record<string, string>): Promise<string[]> {
  const response = await send('/v2/users/get', { ...level, pageSize: 1000 });
  return ((response.body.result?.data ?? []) as Array<{ userId: string }>).map((user) => user.userId).sort();
}

describe('users', () => {
  const users = (ids: string[]) => ids.map((userId) => ({ userId, name: `Name ${userId}` }));

  it('Add Users stopped after its first transaction answers the users written success and stores exactly those', async () => {
    const organizationId = newOrg();

    const response = await failing(second, '/v2/users/add', { organizationId, users: users(range(60, 'u')) });

    expect(response.statusCode).toBe(200);
    const { written, notWritten } = split(response);
    expect(written).toHaveLength(49);
    expect(notWritten).toEqual(range(60, 'u').filter((id) => !written.includes(id)));
    expect(await userIdsAt({ organizationId })).toEqual(written);
  });

  it('Add Users whose first transaction fails answers the error and creates nothing, not even the organization', async () => {
    const organizationId = newOrg();

    const response = await failing(first, '/v2/users/add', { organizationId, users: users(['a', 'b']) });

    expect(response.statusCode).toBe(500);
    expect(response.body.error?.status).toBe('INTERNAL');
    expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
  });

  it('Update Users stopped part way changes exactly the users it answers success for', async () => {
    const organizationId = newOrg();
    await send('/v2/users/add', { organizationId, users: users(range(60, 'u')) });

    const response = await failing(second, '/v2/users/update', {
      organizationId,
      users: range(60, 'u').map((userId) => ({ userId, name: 'Renamed', accessRole: 'viewer' })),
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(50);
    expect(notWritten).toHaveLength(10);
    const listed = (await send('/v2/users/get', { organizationId, pageSize: 1000 })).body.result?.data as Array<{
      userId: string;
      name: string;
    }>;
    expect(
      listed
        .filter((user) => user.name === 'Renamed')
        .map((user) => user.userId)
        .sort(),
    ).toEqual(written);
  });

  it('Delete Users stopped part way removes each user whole: the users answered not written keep every membership', async () => {
    const organizationId = newOrg();
    await send('/v2/users/add', { organizationId, users: users(range(60, 'u')) });
    await send('/v2/users/add', {
      organizationId,
      documentId: 'd1',
      createDocument: true,
      users: users(range(60, 'u')),
    });

    const response = await failing(second, '/v2/users/delete', { organizationId, userIds: range(60, 'u') });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(49);
    expect(notWritten).toHaveLength(11);
    expect(await userIdsAt({ organizationId })).toEqual(notWritten);
    expect(await userIdsAt({ organizationId, documentId: 'd1' })).toEqual(notWritten);
  });

  it('Delete Users of a user with more entries than one transaction holds answers not written and leaves the user listed', async () => {
    const organizationId = newOrg();
    await send('/v2/users/add', { organizationId, users: users(['big']) });
    for (const documentId of range(60, 'doc'))
      await send('/v2/users/add', { organizationId, documentId, createDocument: true, users: users(['big']) });

    const response = await failing(second, '/v2/users/delete', { organizationId, userIds: ['big'] });

    expect(split(response)).toEqual({ written: [], notWritten: ['big'] });
    expect(await userIdsAt({ organizationId })).toEqual(['big']);
  });
});

describe('permissions', () => {
  const documentResources = (organizationId: string, role: string) =>
    range(60, 'doc').map((id) => ({ type: 'document', id, organizationId, accessRole: role }));
  const permissionsOf = async (userId: string) =>
    (
      (await send('/v2/auth/permissions/get', { userId })).body.result?.data as Array<{
        id: string;
        accessRole: string;
      }>
    )
      .map((grant) => `${grant.id}:${grant.accessRole}`)
      .sort();

  it('Add Permissions stopped after its first transaction answers the error and puts back every grant as it was', async () => {
    const organizationId = newOrg();
    const userId = uniqueId('user');
    await send('/v2/auth/permissions/add', {
      user: { userId },
      permissions: { resources: [{ type: 'document', id: 'doc-000', organizationId, accessRole: 'viewer' }] },
    });

    const response = await failing(second, '/v2/auth/permissions/add', {
      user: { userId },
      permissions: { resources: documentResources(organizationId, 'editor') },
    });

    expect(response.statusCode).toBe(500);
    expect(await permissionsOf(userId)).toEqual(['doc-000:viewer']);
  });

  it('Add Permissions that needs several transactions writes all of them when nothing fails', async () => {
    const organizationId = newOrg();
    const userId = uniqueId('user');

    const response = await send('/v2/auth/permissions/add', {
      user: { userId },
      permissions: { resources: documentResources(organizationId, 'editor') },
    });

    expect(response.statusCode).toBe(200);
    expect(await permissionsOf(userId)).toEqual(range(60, 'doc').map((id) => `${id}:editor`));
  });

  it('Remove Permissions stopped part way removes exactly the grants it answers success for', async () => {
    const organizationId = newOrg();
    const userId = uniqueId('user');
    await send('/v2/auth/permissions/add', {
      user: { userId },
      permissions: { resources: documentResources(organizationId, 'editor') },
    });

    const response = await failing(second, '/v2/auth/permissions/remove', {
      userId,
      permissions: { resources: range(60, 'doc').map((id) => ({ type: 'document', id, organizationId })) },
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(50);
    expect(notWritten).toHaveLength(10);
    expect(await permissionsOf(userId)).toEqual(notWritten.map((id) => `${id}:editor`));
  });
});

describe('documents', () => {
  const documentIdsOf = async (organizationId: string) =>
    (await send('/v2/organizations/documents/get', { organizationId, pageSize: 1000 })).body.result?.data as Array<{
      documentId: string;
      disabled: boolean;
    }>;

  it('Add Documents stopped after its first transaction stores exactly the documents it answers success for', async () => {
    const organizationId = newOrg();

    const response = await failing(second, '/v2/organizations/documents/add', {
      organizationId,
      createOrganization: true,
      documents: range(100, 'doc').map((documentId) => ({ documentId, documentName: documentId })),
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(49);
    expect(notWritten).toHaveLength(51);
    expect((await documentIdsOf(organizationId)).map((document) => document.documentId).sort()).toEqual(written);
  });

  it('Disable Documents with one write failing answers that document not written and leaves it as it was', async () => {
    const organizationId = newOrg();
    await send('/v2/organizations/documents/add', {
      organizationId,
      createOrganization: true,
      documents: range(3, 'doc').map((documentId) => ({ documentId })),
    });

    const response = await failing(second, '/v2/organizations/documents/access/disablestate/update', {
      organizationId,
      documentIds: range(3, 'doc'),
      disabled: true,
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(2);
    expect(notWritten).toHaveLength(1);
    const stored = await documentIdsOf(organizationId);
    expect(
      stored
        .filter((document) => document.disabled)
        .map((document) => document.documentId)
        .sort(),
    ).toEqual(written);
  });

  it('Update Documents whose only write fails answers the error', async () => {
    const organizationId = newOrg();
    await send('/v2/organizations/documents/add', {
      organizationId,
      createOrganization: true,
      documents: [{ documentId: 'doc', documentName: 'before' }],
    });

    const response = await failing(first, '/v2/organizations/documents/update', {
      organizationId,
      documents: [{ documentId: 'doc', documentName: 'after' }],
    });

    expect(response.statusCode).toBe(500);
    expect((await documentIdsOf(organizationId))[0]).toMatchObject({ documentName: 'before' });
  });
});

describe('user groups', () => {
  const groups = (n: number) => range(n, 'g').map((groupId) => ({ groupId, groupName: groupId }));

  it('Add User Groups stopped after its first transaction stores exactly the groups it answers success for', async () => {
    const organizationId = newOrg();

    const response = await failing(second, '/v2/organizations/usergroups/add', {
      organizationId,
      createOrganization: true,
      organizationUserGroups: groups(100),
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(99);
    expect(notWritten).toEqual(['g-099']);
    expect(await getGroup(tenant.apiKeyId, organizationId, 'g-098')).toBeDefined();
    expect(await getGroup(tenant.apiKeyId, organizationId, 'g-099')).toBeUndefined();
  });

  it('Add User Groups whose only transaction fails creates no organization', async () => {
    const organizationId = newOrg();

    const response = await failing(first, '/v2/organizations/usergroups/add', {
      organizationId,
      createOrganization: true,
      organizationUserGroups: groups(1),
    });

    expect(response.statusCode).toBe(500);
    expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
  });

  it('adding and removing group members stopped part way changes exactly the members answered success', async () => {
    const organizationId = newOrg();
    await send('/v2/organizations/usergroups/add', {
      organizationId,
      createOrganization: true,
      organizationUserGroups: groups(1),
    });
    const userIds = range(60, 'u');
    const batchFault = { command: 'BatchWriteItem', nth: 2 };

    const added = await failing(batchFault, '/v2/organizations/usergroups/users/add', {
      organizationId,
      organizationUserGroupId: 'g-000',
      userIds,
    });
    const addedSplit = split(added);
    const members = await groupMembersAmong(tenant.apiKeyId, organizationId, 'g-000', userIds);
    await send('/v2/organizations/usergroups/users/add', { organizationId, organizationUserGroupId: 'g-000', userIds });
    const removed = await failing(batchFault, '/v2/organizations/usergroups/users/delete', {
      organizationId,
      organizationUserGroupId: 'g-000',
      userIds,
    });
    const left = await groupMembersAmong(tenant.apiKeyId, organizationId, 'g-000', userIds);

    expect(addedSplit.notWritten.length).toBeGreaterThan(0);
    expect([...members.keys()].sort()).toEqual(addedSplit.written);
    expect(split(removed).notWritten.length).toBeGreaterThan(0);
    expect([...left.keys()].sort()).toEqual(split(removed).notWritten);
  });
});

describe('notifications', () => {
  const notification = (organizationId: string, notificationId: string) => ({
    organizationId,
    documentId: 'doc',
    createOrganization: true,
    createDocument: true,
    notificationId,
    actionUser: { userId: 'actor' },
    displayHeadlineMessageTemplate: 'Hello',
    notifyUsers: [{ userId: 'reader' }, { userId: 'other' }],
  });
  const feedOf = async (organizationId: string, userId: string) =>
    (await send('/v2/notifications/get', { organizationId, userId })).body.result?.data as Array<{
      id: string;
      readByUserIds: string[];
    }>;

  it("Update Notifications whose write fails keeps the notification unread and in the reader's feed", async () => {
    const organizationId = newOrg();
    await send('/v2/notifications/add', notification(organizationId, 'n1'));
    await send('/v2/notifications/add', notification(organizationId, 'n2'));

    const response = await failing(first, '/v2/notifications/update', {
      organizationId,
      notifications: [
        { id: 'n1', readByUserIds: ['reader'] },
        { id: 'n2', readByUserIds: ['reader'] },
      ],
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(1);
    expect(notWritten).toHaveLength(1);
    expect((await feedOf(organizationId, 'reader')).map((n) => n.id)).toEqual(notWritten);
    const all = await send('/v2/notifications/get', { organizationId, documentId: 'doc' });
    const readers = Object.fromEntries(
      (all.body.result?.data as Array<{ id: string; readByUserIds: string[] }>).map((n) => [n.id, n.readByUserIds]),
    );
    expect(readers[notWritten[0]]).toEqual([]);
    expect(readers[written[0]]).toEqual(['reader']);
  });

  it("Delete Notifications whose write fails keeps that notification in every recipient's feed", async () => {
    const organizationId = newOrg();
    await send('/v2/notifications/add', notification(organizationId, 'n1'));
    await send('/v2/notifications/add', notification(organizationId, 'n2'));

    const response = await failing(first, '/v2/notifications/delete', {
      organizationId,
      notificationIds: ['n1', 'n2'],
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(1);
    expect(notWritten).toHaveLength(1);
    expect((await feedOf(organizationId, 'reader')).map((n) => n.id)).toEqual(notWritten);
    expect((await feedOf(organizationId, 'other')).map((n) => n.id)).toEqual(notWritten);
  });
});

describe('recordings', () => {
  const recording = (annotationId: string) => ({
    annotationId,
    type: 'audio',
    recordingType: 'audio',
    mode: 'floating',
    recordedTime: { duration: 1 },
  });

  it('Add Recordings whose first write fails creates neither the organization nor the document', async () => {
    const organizationId = newOrg();

    const response = await failing(first, '/v2/recordings/add', {
      organizationId,
      documentId: 'doc',
      recordings: [recording('r1'), recording('r2')],
    });

    expect(response.statusCode).toBe(500);
    expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
  });

  it('Add Recordings stopped after the first answers the recordings written success and stores exactly those', async () => {
    const organizationId = newOrg();

    const response = await failing(second, '/v2/recordings/add', {
      organizationId,
      documentId: 'doc',
      recordings: [recording('r1'), recording('r2'), recording('r3')],
    });

    const { written, notWritten } = split(response);
    expect(written).toHaveLength(2);
    expect(notWritten).toHaveLength(1);
    const stored = (await send('/v2/recordings/get', { organizationId, documentId: 'doc' })).body.result
      ?.data as Array<{ annotationId: string }>;
    expect(stored.map((r) => r.annotationId).sort()).toEqual(written);
  });
});

describe('notification settings', () => {
  it('Set Notification Config stopped part way sets each user whole: success for the users stored, nothing for the others', async () => {
    const organizationId = newOrg();
    await send('/v2/users/add', { organizationId, users: [{ userId: 'a' }, { userId: 'b' }, { userId: 'c' }] });
    // 30 settings per user, with the 30 documents' lock checks shared: two users fill a transaction, the third starts the next.
    const documentIds = range(30, 'doc');

    const response = await failing(second, '/v2/notifications/config/set', {
      organizationId,
      userIds: ['a', 'b', 'c'],
      documentIds,
      config: { inbox: 'NONE' },
    });
    const read = async (userId: string) =>
      (
        (await send('/v2/notifications/config/get', { organizationId, userId, documentIds: ['doc-029'] })).body.result
          ?.data as Array<{ config: { inbox: string } }>
      )[0].config.inbox;

    expect(split(response)).toEqual({ written: ['a', 'b'], notWritten: ['c'] });
    expect(await read('b')).toBe('NONE');
    expect(await read('c')).not.toBe('NONE');
  });
});
