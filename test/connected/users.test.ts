import { handler as addUsers } from '../../functions/users/add';
import { handler as deleteUsers } from '../../functions/users/delete';
import { handler as getUsers } from '../../functions/users/get';
import { handler as updateUsers } from '../../functions/users/update';
import { accessOfUsers } from '../../shared/domain/access';
import { batchWrite, putRequest } from '../../shared/db/batch';
import { getMemberships } from '../../shared/db/membership';
import { getDocument, organizationExists } from '../../shared/db/organization';
import { grantItem, listActiveGrants } from '../../shared/db/permission';
import { groupMemberItem } from '../../shared/db/user-group';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { invoke, endpoint } from '../support/invoke';
import { uniqueId } from '../support/ids';

const add = endpoint(addUsers, '/v2/users/add');
const update = endpoint(updateUsers, '/v2/users/update');
const get = endpoint(getUsers, '/v2/users/get');
const remove = endpoint(deleteUsers, '/v2/users/delete');
const ids = (response: Awaited<ReturnType<typeof get>>) =>
  (response.body.result?.data as Array<{ userId: string }>).map((u) => u.userId);

describe('users', () => {
  let tenant: Tenant;

  beforeAll(async () => {
    tenant = await newTenant();
  });

  describe('add', () => {
    it('adds organization users with derived initial and the default editor role', async () => {
      const organizationId = uniqueId('org');

      const response = await add(tenant, {
        organizationId,
        users: [
          { userId: 'u1', name: 'alice', email: 'a@x.io' },
          { userId: 'u2', accessRole: 'viewer' },
        ],
      });

      expect(response.statusCode).toBe(200);
      expect(response.body.result?.data).toEqual({
        u1: { success: true, id: expect.stringMatching(/^usr_/), message: 'User added.' },
        u2: { success: true, id: expect.stringMatching(/^usr_/), message: 'User added.' },
      });
      const users = await get(tenant, { organizationId });
      expect(users.body.result?.data).toEqual([
        { userId: 'u1', name: 'alice', email: 'a@x.io', initial: 'A', accessRole: 'editor' },
        { userId: 'u2', accessRole: 'viewer' },
      ]);
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(true);
    });

    it('keeps document-level and folder-level users out of the organization', async () => {
      const organizationId = uniqueId('org');

      await add(tenant, { organizationId, documentId: 'd1', createDocument: true, users: [{ userId: 'doc-user' }] });
      await add(tenant, { organizationId, folderId: 'f1', createFolder: true, users: [{ userId: 'folder-user' }] });

      expect(ids(await get(tenant, { organizationId }))).toEqual([]);
      expect(ids(await get(tenant, { organizationId, documentId: 'd1' }))).toEqual(['doc-user']);
      expect(ids(await get(tenant, { organizationId, folderId: 'f1' }))).toEqual(['folder-user']);
    });

    it('answers NOT_FOUND for a missing document without createDocument, and writes nothing', async () => {
      const organizationId = uniqueId('org');

      const response = await add(tenant, { organizationId, documentId: 'nope', users: [{ userId: 'u1' }] });

      expect(response.statusCode).toBe(404);
      expect(response.body.error).toEqual({ status: 'NOT_FOUND', message: 'Document not found.' });
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
      expect(
        (await getMemberships(tenant.apiKeyId, organizationId, { type: 'document', id: 'nope' }, ['u1'])).size,
      ).toBe(0);
    });

    it('answers NOT_FOUND for a missing folder without createFolder', async () => {
      const response = await add(tenant, {
        organizationId: uniqueId('org'),
        folderId: 'nope',
        users: [{ userId: 'u1' }],
      });

      expect(response.body.error).toEqual({ status: 'NOT_FOUND', message: 'Folder not found.' });
    });

    it('creates the document with createDocument', async () => {
      const organizationId = uniqueId('org');

      await add(tenant, { organizationId, documentId: 'new-doc', createDocument: true, users: [{ userId: 'u1' }] });

      expect(await getDocument(tenant.apiKeyId, organizationId, 'new-doc')).toMatchObject({
        accessType: 'organizationPrivate',
        disabled: false,
      });
    });

    it('updates only the given fields when a user is added again, keeping the same id', async () => {
      const organizationId = uniqueId('org');
      const first = await add(tenant, {
        organizationId,
        users: [{ userId: 'u1', name: 'Ann', email: 'ann@x.io', accessRole: 'viewer' }],
      });

      const second = await add(tenant, { organizationId, users: [{ userId: 'u1', name: 'Bea' }] });

      expect(second.body.result?.data.u1.id).toBe(first.body.result?.data.u1.id);
      expect((await get(tenant, { organizationId })).body.result?.data).toEqual([
        { userId: 'u1', name: 'Bea', email: 'ann@x.io', initial: 'B', accessRole: 'viewer' },
      ]);
    });

    it('shares the profile across levels', async () => {
      const organizationId = uniqueId('org');
      await add(tenant, {
        organizationId,
        documentId: 'd',
        createDocument: true,
        users: [{ userId: 'shared', name: 'Zed', email: 'z@x.io' }],
      });

      await add(tenant, { organizationId, users: [{ userId: 'shared' }] });

      expect((await get(tenant, { organizationId })).body.result?.data).toEqual([
        { userId: 'shared', name: 'Zed', email: 'z@x.io', initial: 'Z', accessRole: 'editor' },
      ]);
    });

    it('adds 100 users in one request, and refuses 101', async () => {
      const organizationId = uniqueId('org');
      const users = Array.from({ length: 100 }, (_, i) => ({
        userId: `bulk-${String(i).padStart(3, '0')}`,
        name: `User ${i}`,
      }));

      const ok = await add(tenant, { organizationId, users });
      const tooMany = await add(tenant, { organizationId, users: [...users, { userId: 'one-more' }] });

      expect(Object.keys(ok.body.result?.data)).toHaveLength(100);
      expect(ids(await get(tenant, { organizationId }))).toHaveLength(100);
      expect(tooMany.statusCode).toBe(400);
      expect(ids(await get(tenant, { organizationId }))).not.toContain('one-more');
    });

    it.each([
      [
        'both documentId and folderId',
        { organizationId: 'o', documentId: 'd', folderId: 'f', users: [{ userId: 'u' }] },
        'data.documentId',
      ],
      ['a missing organizationId', { users: [{ userId: 'u' }] }, 'data.organizationId'],
      ['missing users', { organizationId: 'o' }, 'data.users'],
      ['an empty users array', { organizationId: 'o', users: [] }, 'data.users'],
      ['a user without userId', { organizationId: 'o', users: [{ name: 'x' }] }, 'data.users.0.userId'],
      ['a numeric userId', { organizationId: 'o', users: [{ userId: 5 }] }, 'data.users.0.userId'],
      [
        'an unknown accessRole',
        { organizationId: 'o', users: [{ userId: 'u', accessRole: 'owner' }] },
        'data.users.0.accessRole',
      ],
      [
        'a userId of 257 characters',
        { organizationId: 'o', users: [{ userId: 'u'.repeat(257) }] },
        'data.users.0.userId',
      ],
      [
        'a userId with a control character',
        { organizationId: 'o', users: [{ userId: 'a\nb' }] },
        'data.users.0.userId',
      ],
      ['duplicate userIds', { organizationId: 'o', users: [{ userId: 'u' }, { userId: 'u' }] }, 'data.users'],
    ])('rejects %s with INVALID_ARGUMENT and writes nothing', async (_, data, path) => {
      const response = await add(tenant, data);

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
      expect(await organizationExists(tenant.apiKeyId, 'o')).toBe(false);
    });
  });

  describe('update', () => {
    it('updates members and reports non-members per item, with overall success', async () => {
      const organizationId = uniqueId('org');
      await add(tenant, { organizationId, users: [{ userId: 'member', name: 'Old' }] });

      const response = await update(tenant, {
        organizationId,
        users: [
          { userId: 'member', name: 'New', accessRole: 'viewer' },
          { userId: 'stranger', name: 'X' },
        ],
      });

      expect(response.body.result?.status).toBe('success');
      expect(response.body.result?.data.member).toMatchObject({ success: true, message: 'User updated.' });
      expect(response.body.result?.data.stranger).toMatchObject({ success: false, message: 'User does not exist.' });
      expect((await get(tenant, { organizationId })).body.result?.data).toEqual([
        { userId: 'member', name: 'New', initial: 'N', accessRole: 'viewer' },
      ]);
    });

    it('treats a user of another level as not existing at this level', async () => {
      const organizationId = uniqueId('org');
      await add(tenant, { organizationId, users: [{ userId: 'org-only' }] });

      const response = await update(tenant, {
        organizationId,
        documentId: 'd',
        users: [{ userId: 'org-only', accessRole: 'viewer' }],
      });

      expect(response.body.result?.data['org-only'].success).toBe(false);
    });
  });

  describe('delete', () => {
    it('removes a document membership only, keeping the organization membership', async () => {
      const organizationId = uniqueId('org');
      await add(tenant, { organizationId, users: [{ userId: 'u' }] });
      await add(tenant, { organizationId, documentId: 'd', createDocument: true, users: [{ userId: 'u' }] });

      const response = await remove(tenant, { organizationId, documentId: 'd', userIds: ['u', 'ghost'] });

      expect(response.body.result?.data).toEqual({
        u: { success: true, message: 'User removed.' },
        ghost: { success: false, message: 'User does not exist.' },
      });
      expect(ids(await get(tenant, { organizationId, documentId: 'd' }))).toEqual([]);
      expect(ids(await get(tenant, { organizationId }))).toEqual(['u']);
    });

    it('at organization level removes every membership, grant and group membership of the user in it', async () => {
      const organizationId = uniqueId('org');
      const otherOrg = uniqueId('org');
      await add(tenant, { organizationId, users: [{ userId: 'u' }, { userId: 'keep' }] });
      await add(tenant, { organizationId, documentId: 'd', createDocument: true, users: [{ userId: 'u' }] });
      await add(tenant, { organizationId, folderId: 'f', createFolder: true, users: [{ userId: 'u' }] });
      await add(tenant, { organizationId: otherOrg, users: [{ userId: 'u' }] });
      await batchWrite([
        putRequest(
          grantItem(tenant.apiKeyId, { userId: 'u', type: 'document', id: 'd', organizationId, accessRole: 'editor' }),
        ),
        putRequest(
          grantItem(tenant.apiKeyId, {
            userId: 'u',
            type: 'organization',
            id: otherOrg,
            organizationId: otherOrg,
            accessRole: 'editor',
          }),
        ),
        putRequest(groupMemberItem(tenant.apiKeyId, organizationId, 'g', 'u')),
      ]);

      const response = await invoke(
        deleteUsers,
        '/v1/users/delete',
        { organizationId, userIds: ['u'] },
        { headers: tenant.apiKeyHeaders },
      );

      expect(response.body.result?.data.u).toEqual({ success: true, message: 'User removed.' });
      expect(ids(await get(tenant, { organizationId }))).toEqual(['keep']);
      expect(ids(await get(tenant, { organizationId, documentId: 'd' }))).toEqual([]);
      expect(ids(await get(tenant, { organizationId, folderId: 'f' }))).toEqual([]);
      expect(ids(await get(tenant, { organizationId, organizationUserGroupIds: ['g'] }))).toEqual([]);
      expect(await listActiveGrants(tenant.apiKeyId, 'u', organizationId, Date.now())).toEqual([]);
      expect(ids(await get(tenant, { organizationId: otherOrg }))).toEqual(['u']);
      expect(await listActiveGrants(tenant.apiKeyId, 'u', otherOrg, Date.now())).toHaveLength(1);
    });

    it('reports a user with nothing in the organization as not existing', async () => {
      const response = await remove(tenant, { organizationId: uniqueId('org'), userIds: ['nobody'] });

      expect(response.body.result?.data.nobody).toEqual({ success: false, message: 'User does not exist.' });
    });
  });

  describe('get', () => {
    const organizationId = uniqueId('org');

    beforeAll(async () => {
      const users = Array.from({ length: 7 }, (_, i) => ({ userId: `p${i}`, name: `P${i}` }));
      await add(tenant, { organizationId, users });
      await add(tenant, {
        organizationId,
        documentId: 'doc-a',
        createDocument: true,
        users: [{ userId: 'p1' }, { userId: 'p2', accessRole: 'viewer' }],
      });
      await add(tenant, {
        organizationId,
        documentId: 'doc-b',
        createDocument: true,
        users: [{ userId: 'p2' }, { userId: 'x9' }],
      });
      await batchWrite(
        ['p1', 'p3', 'p5', 'x9'].map((userId) =>
          putRequest(groupMemberItem(tenant.apiKeyId, organizationId, 'odd', userId)),
        ),
      );
      await batchWrite(
        ['p6'].map((userId) => putRequest(groupMemberItem(tenant.apiKeyId, organizationId, 'six', userId))),
      );
    });

    it('pages with full pages and no token on the last page', async () => {
      const first = await get(tenant, { organizationId, pageSize: 3 });
      const second = await get(tenant, { organizationId, pageSize: 3, pageToken: first.body.result?.nextPageToken });
      const third = await get(tenant, { organizationId, pageSize: 3, pageToken: second.body.result?.nextPageToken });

      expect(ids(first)).toEqual(['p0', 'p1', 'p2']);
      expect(ids(second)).toEqual(['p3', 'p4', 'p5']);
      expect(ids(third)).toEqual(['p6']);
      expect(third.body.result).not.toHaveProperty('nextPageToken');
    });

    it('ends exactly on a full last page without a token', async () => {
      const first = await get(tenant, { organizationId, pageSize: 7 });

      expect(ids(first)).toHaveLength(7);
      expect(first.body.result).not.toHaveProperty('nextPageToken');
    });

    it('filters by userIds, skipping users who are not at the level', async () => {
      const response = await get(tenant, { organizationId, userIds: ['p4', 'x9', 'p0', 'nobody'] });

      expect(ids(response)).toEqual(['p0', 'p4']);
    });

    it('filters by groups (a user in any of them) and pages through them', async () => {
      const first = await get(tenant, { organizationId, organizationUserGroupIds: ['odd', 'six'], pageSize: 2 });
      const second = await get(tenant, {
        organizationId,
        organizationUserGroupIds: ['odd', 'six'],
        pageSize: 2,
        pageToken: first.body.result?.nextPageToken,
      });

      expect(ids(first)).toEqual(['p1', 'p3']);
      expect(ids(second)).toEqual(['p5', 'p6']);
      expect(second.body.result).not.toHaveProperty('nextPageToken');
    });

    it('examines at most 5 × pageSize group members per call, answering short pages with a token that resumes after them', async () => {
      // 12 members of a group, of whom only m03 and m10 are at the document: a page of 1 examines 5 members a call.
      const organizationId2 = uniqueId('org');
      const members = Array.from({ length: 12 }, (_, i) => `m${String(i).padStart(2, '0')}`);
      await add(tenant, {
        organizationId: organizationId2,
        documentId: 'doc',
        createDocument: true,
        users: [{ userId: 'm03' }, { userId: 'm10' }],
      });
      await batchWrite(
        members.map((userId) => putRequest(groupMemberItem(tenant.apiKeyId, organizationId2, 'big', userId))),
      );
      const query = {
        organizationId: organizationId2,
        documentId: 'doc',
        organizationUserGroupIds: ['big'],
        pageSize: 1,
      };

      const first = await get(tenant, query);
      const second = await get(tenant, { ...query, pageToken: first.body.result?.nextPageToken });
      const third = await get(tenant, { ...query, pageToken: second.body.result?.nextPageToken });

      expect([ids(first), ids(second), ids(third)]).toEqual([['m03'], [], ['m10']]);
      expect(second.body.result?.nextPageToken).toBeDefined();
      expect(third.body.result).not.toHaveProperty('nextPageToken');
    });

    it('intersects userIds, groups and the level', async () => {
      const response = await get(tenant, {
        organizationId,
        documentId: 'doc-b',
        userIds: ['x9', 'p2'],
        organizationUserGroupIds: ['odd'],
      });

      expect(ids(response)).toEqual(['x9']);
    });

    it('returns all document users (not organization-level users), with their documents', async () => {
      const response = await get(tenant, { organizationId, allDocuments: true });

      expect(response.body.result?.data).toEqual([
        expect.objectContaining({ userId: 'p1', documentId: 'doc-a', accessRole: 'editor' }),
        expect.objectContaining({ userId: 'p2', documentId: 'doc-a', accessRole: 'viewer' }),
        expect.objectContaining({ userId: 'p2', documentId: 'doc-b' }),
        expect.objectContaining({ userId: 'x9', documentId: 'doc-b' }),
      ]);
    });

    it('groups all document users by document, page by page', async () => {
      const first = await get(tenant, { organizationId, allDocuments: true, groupByDocumentId: true, pageSize: 3 });
      const second = await get(tenant, {
        organizationId,
        allDocuments: true,
        groupByDocumentId: true,
        pageSize: 3,
        pageToken: first.body.result?.nextPageToken,
      });

      expect(first.body.result?.data).toEqual({
        'doc-a': [expect.objectContaining({ userId: 'p1' }), expect.objectContaining({ userId: 'p2' })],
        'doc-b': [expect.objectContaining({ userId: 'p2' })],
      });
      expect(second.body.result?.data).toEqual({ 'doc-b': [expect.objectContaining({ userId: 'x9' })] });
      expect(second.body.result).not.toHaveProperty('nextPageToken');
    });

    it('narrows all document users by userIds and by groups', async () => {
      const byUser = await get(tenant, { organizationId, allDocuments: true, userIds: ['p2'] });
      const byGroup = await get(tenant, { organizationId, allDocuments: true, organizationUserGroupIds: ['odd'] });

      expect((byUser.body.result?.data as Array<{ documentId: string }>).map((u) => u.documentId)).toEqual([
        'doc-a',
        'doc-b',
      ]);
      expect(ids(byGroup)).toEqual(['p1', 'x9']);
    });

    it.each([
      ['31 userIds', { userIds: Array.from({ length: 31 }, (_, i) => `u${i}`) }],
      ['31 group ids', { organizationUserGroupIds: Array.from({ length: 31 }, (_, i) => `g${i}`) }],
      ['groupByDocumentId without allDocuments', { groupByDocumentId: true }],
      ['allDocuments with a documentId', { allDocuments: true, documentId: 'd' }],
      ['pageSize 0', { pageSize: 0 }],
      ['pageSize 1001', { pageSize: 1001 }],
      ['a tampered page token', { pageToken: 'abc.def' }],
    ])('rejects %s with INVALID_ARGUMENT', async (_, extra) => {
      const response = await get(tenant, { organizationId, ...extra });

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    });

    it('rejects a page token of another query', async () => {
      const token = (await get(tenant, { organizationId, pageSize: 1 })).body.result?.nextPageToken;

      const response = await get(tenant, { organizationId, documentId: 'doc-a', pageSize: 1, pageToken: token });

      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    });
  });

  it('keeps ids with separators, unicode and 256 characters apart', async () => {
    const organizationId = 'org#1';
    const tricky = ['a#b', 'a', 'b', 'USER#1', 'a|b', '%23', '~x', 'ü-用户', 'x'.repeat(256), `${'x'.repeat(255)}y`];

    await add(tenant, { organizationId, users: tricky.map((userId) => ({ userId, name: userId.slice(0, 10) })) });
    await add(tenant, { organizationId: 'org', documentId: 'doc#1', createDocument: true, users: [{ userId: 'a' }] });

    expect(ids(await get(tenant, { organizationId })).sort()).toEqual([...tricky].sort());
    expect(ids(await get(tenant, { organizationId: 'org' }))).toEqual([]);
    expect(ids(await get(tenant, { organizationId: 'org', documentId: 'doc#1' }))).toEqual(['a']);
    expect(ids(await get(tenant, { organizationId: 'org#1', documentId: 'doc#1' }))).toEqual([]);
  });

  it('resolves effective access from memberships at every level', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, { organizationId, users: [{ userId: 'o', accessRole: 'viewer' }] });
    await add(tenant, {
      organizationId,
      documentId: 'd',
      createDocument: true,
      users: [{ userId: 'd', accessRole: 'editor' }],
    });

    const access = await accessOfUsers(tenant.apiKeyId, organizationId, 'd', ['o', 'd', 'none']);

    expect(Object.fromEntries(access)).toEqual({ o: 'viewer', d: 'editor', none: null });
  });

  describe('tenancy', () => {
    it('hides and protects the users of one API key from a sibling key and from another workspace', async () => {
      const organizationId = uniqueId('org');
      await add(tenant, { organizationId, users: [{ userId: 'private', name: 'Secret' }] });
      const sibling = await siblingKey(tenant);
      const stranger = (await newTenant()).apiKeyHeaders;

      for (const headers of [sibling, stranger]) {
        expect(ids(await get(headers, { organizationId }))).toEqual([]);
        expect(
          (await update(headers, { organizationId, users: [{ userId: 'private', name: 'Hacked' }] })).body.result?.data
            .private.success,
        ).toBe(false);
        expect(
          (await remove(headers, { organizationId, userIds: ['private'] })).body.result?.data.private.success,
        ).toBe(false);
      }
      expect((await get(tenant, { organizationId })).body.result?.data).toEqual([
        { userId: 'private', name: 'Secret', initial: 'S', accessRole: 'editor' },
      ]);
    });
  });
});
