import { handler as addNotification } from '../../functions/notifications/add';
import { handler as getConfig } from '../../functions/notifications/config-get';
import { handler as setConfig } from '../../functions/notifications/config-set';
import { handler as deleteNotifications } from '../../functions/notifications/delete';
import { handler as getNotifications } from '../../functions/notifications/get';
import { handler as updateNotifications } from '../../functions/notifications/update';
import { handler as addUsers } from '../../functions/users/add';
import { handler as updateDocuments } from '../../functions/documents/update';
import { getNotification } from '../../shared/db/notification';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { invoke, endpoint } from '../support/invoke';
import { uniqueId } from '../support/ids';

type Headers = Record<string, string>;
const add = endpoint(addNotification, '/v2/notifications/add');
const get = endpoint(getNotifications, '/v2/notifications/get');
const update = endpoint(updateNotifications, '/v2/notifications/update');
const remove = endpoint(deleteNotifications, '/v2/notifications/delete');
const users = endpoint(addUsers, '/v2/users/add');
const configGet = endpoint(getConfig, '/v2/notifications/config/get');
const configSet = endpoint(setConfig, '/v2/notifications/config/set');
const ids = (response: Awaited<ReturnType<typeof get>>) =>
  (response.body.result?.data as Array<{ id: string }>).map((n) => n.id);

const base = (organizationId: string, extra: Record<string, unknown> = {}) => ({
  organizationId,
  documentId: 'doc',
  createOrganization: true,
  createDocument: true,
  actionUser: { userId: 'actor', name: 'Actor' },
  displayHeadlineMessageTemplate: '{{actionUser}} mentioned you',
  ...extra,
});

describe('notifications', () => {
  let tenant: Tenant;
  let h: Headers;

  beforeAll(async () => {
    tenant = await newTenant();
    h = tenant.apiKeyHeaders;
  });

  describe('add and get', () => {
    it('delivers to the named users and reads back with the documented shape', async () => {
      const organizationId = uniqueId('org');

      const added = await add(
        h,
        base(organizationId, {
          notificationId: 'n1',
          locationId: 'loc',
          notifyUsers: [{ userId: 'u1' }, { userId: 'u2', name: 'Two' }],
          notificationSource: 'comment',
          notificationSourceData: { threadId: 't' },
        }),
      );

      expect(added.body.result?.data).toEqual({ notificationId: 'n1' });
      const feed = await get(h, { organizationId, userId: 'u1' });
      expect(feed.body.result?.data).toEqual([
        {
          id: 'n1',
          notificationSource: 'comment',
          notificationSourceData: { threadId: 't' },
          actionUser: { userId: 'actor', name: 'Actor' },
          displayHeadlineMessageTemplate: '{{actionUser}} mentioned you',
          notifyUsers: [{ userId: 'u1' }, { userId: 'u2', name: 'Two' }],
          readByUserIds: [],
          metadata: { apiKey: tenant.apiKeyId, organizationId, documentId: 'doc', locationId: 'loc' },
          timestamp: expect.any(Number),
        },
      ]);
      expect(ids(await get(h, { organizationId, userId: 'u3' }))).toEqual([]);
      expect(ids(await get(h, { organizationId, documentId: 'doc' }))).toEqual(['n1']);
      expect(ids(await get(h, { organizationId }))).toEqual(['n1']);
    });

    it('generates an id when none is given', async () => {
      const added = await add(h, base(uniqueId('org')));

      expect(added.body.result?.data.notificationId).toMatch(/^ntf_/);
    });

    it('answers NOT_FOUND for a missing organization or document without the create flags', async () => {
      const noOrg = await add(h, base(uniqueId('org'), { createOrganization: false }));
      const organizationId = uniqueId('org');
      await add(h, base(organizationId));
      const noDoc = await add(h, base(organizationId, { documentId: 'other', createDocument: false }));

      expect(noOrg.body.error).toEqual({ status: 'NOT_FOUND', message: 'Organization not found.' });
      expect(noDoc.body.error).toEqual({ status: 'NOT_FOUND', message: 'Document not found.' });
    });

    it('with notifyAll reaches every organization member except the acting user', async () => {
      const organizationId = uniqueId('org');
      await users(h, { organizationId, users: [{ userId: 'm1' }, { userId: 'm2' }, { userId: 'actor' }] });

      await add(
        h,
        base(organizationId, { notificationId: 'all', notifyAll: true, notifyUsers: [{ userId: 'outsider' }] }),
      );

      for (const userId of ['m1', 'm2', 'outsider'])
        expect(ids(await get(h, { organizationId, userId }))).toEqual(['all']);
      expect(ids(await get(h, { organizationId, userId: 'actor' }))).toEqual([]);
    });

    it('with verifyUserPermissions skips recipients without access to the document', async () => {
      const organizationId = uniqueId('org');
      await users(h, { organizationId, users: [{ userId: 'member' }] });
      await add(h, base(organizationId, { notificationId: 'setup', notifyUsers: [] }));
      await invoke(
        updateDocuments,
        '/v2/organizations/documents/update',
        { organizationId, documents: [{ documentId: 'doc', accessType: 'restricted' }] },
        { headers: h },
      );
      await users(h, { organizationId, documentId: 'doc', users: [{ userId: 'doc-user' }] });

      await add(
        h,
        base(organizationId, {
          notificationId: 'v',
          notifyUsers: [{ userId: 'member' }, { userId: 'doc-user' }, { userId: 'stranger' }],
          verifyUserPermissions: true,
        }),
      );

      expect(ids(await get(h, { organizationId, userId: 'doc-user' }))).toEqual(['v']);
      expect(ids(await get(h, { organizationId, userId: 'member' }))).toEqual([]);
      expect(ids(await get(h, { organizationId, userId: 'stranger' }))).toEqual([]);
    });

    it('updates an existing notificationId instead of duplicating it, keeping its time and read state', async () => {
      const organizationId = uniqueId('org');
      await add(h, base(organizationId, { notificationId: 'same', notifyUsers: [{ userId: 'a' }] }));
      await update(h, {
        organizationId,
        notifications: [{ id: 'same', readByUserIds: ['a'], persistReadForUsers: true }],
      });
      const before = await getNotification(tenant.apiKeyId, organizationId, 'same');

      await add(
        h,
        base(organizationId, { notificationId: 'same', displayBodyMessage: 'edited', notifyUsers: [{ userId: 'b' }] }),
      );

      const listed = await get(h, { organizationId });
      expect(ids(listed)).toEqual(['same']);
      expect(listed.body.result?.data[0]).toMatchObject({
        displayBodyMessage: 'edited',
        readByUserIds: ['a'],
        timestamp: before?.timestamp,
      });
      expect(ids(await get(h, { organizationId, userId: 'b' }))).toEqual(['same']);
    });

    it('pages in time order, newest first by default, with full pages and no token on the last', async () => {
      const organizationId = uniqueId('org');
      for (let i = 0; i < 5; i += 1) {
        await add(
          h,
          base(organizationId, {
            notificationId: `p${i}`,
            notifyUsers: [{ userId: 'reader' }],
            locationId: i % 2 === 0 ? 'even' : 'odd',
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, 3));
      }

      const first = await get(h, { organizationId, userId: 'reader', pageSize: 2 });
      const second = await get(h, {
        organizationId,
        userId: 'reader',
        pageSize: 2,
        pageToken: first.body.result?.pageToken,
      });
      const third = await get(h, {
        organizationId,
        userId: 'reader',
        pageSize: 2,
        pageToken: second.body.result?.pageToken,
      });
      const ascending = await get(h, { organizationId, documentId: 'doc', order: 'asc', pageSize: 3 });
      const even = await get(h, { organizationId, documentId: 'doc', locationId: 'even', pageSize: 2 });
      const named = await get(h, { organizationId, notificationIds: ['p1', 'p3', 'missing'], order: 'asc' });

      expect([...ids(first), ...ids(second), ...ids(third)]).toEqual(['p4', 'p3', 'p2', 'p1', 'p0']);
      expect(third.body.result).not.toHaveProperty('pageToken');
      expect(ids(ascending)).toEqual(['p0', 'p1', 'p2']);
      expect(ids(even)).toEqual(['p4', 'p2']);
      expect(ids(named)).toEqual(['p1', 'p3']);
    });

    it.each([
      ['a missing documentId', { documentId: undefined }],
      ['a missing actionUser', { actionUser: undefined }],
      ['a missing headline', { displayHeadlineMessageTemplate: undefined }],
      ['a numeric headline', { displayHeadlineMessageTemplate: 5 }],
      ['101 notifyUsers', { notifyUsers: Array.from({ length: 101 }, (_, i) => ({ userId: `u${i}` })) }],
      ['duplicate notifyUsers', { notifyUsers: [{ userId: 'u' }, { userId: 'u' }] }],
      ['a huge notificationSourceData', { notificationSourceData: { blob: 'x'.repeat(70000) } }],
      ['an eventType without an action', { eventType: 'comment' }],
      ['an eventType with a space', { eventType: 'comment.a b' }],
      ['an eventType of 101 characters', { eventType: `comment.${'a'.repeat(93)}` }],
      ['a numeric eventType', { eventType: 7 }],
    ])('rejects %s with INVALID_ARGUMENT and stores nothing', async (_, extra) => {
      const organizationId = uniqueId('org');

      const response = await add(h, base(organizationId, { notificationId: 'bad', ...extra }));

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(await getNotification(tenant.apiKeyId, organizationId, 'bad')).toBeUndefined();
    });
  });

  describe('update', () => {
    it('adds readers (never removes), drops read notifications from feeds unless persisted, and reports unknown ids', async () => {
      const organizationId = uniqueId('org');
      await add(
        h,
        base(organizationId, { notificationId: 'r', notifyUsers: [{ userId: 'a' }, { userId: 'b' }, { userId: 'c' }] }),
      );

      const first = await update(h, {
        organizationId,
        notifications: [
          { id: 'r', readByUserIds: ['a'] },
          { id: 'ghost', readByUserIds: ['a'] },
        ],
      });
      await update(h, {
        organizationId,
        notifications: { id: 'r', readByUserIds: ['b'], persistReadForUsers: true, displayBodyMessage: 'new body' },
      });

      expect(first.body.result?.status).toBe('success');
      expect(first.body.result?.data).toEqual({
        r: { success: true, message: 'Notification updated.' },
        ghost: { success: false, message: 'Notification does not exist.' },
      });
      const stored = (await get(h, { organizationId })).body.result?.data[0];
      expect(stored.readByUserIds).toEqual(['a', 'b']);
      expect(stored.displayBodyMessage).toBe('new body');
      expect(ids(await get(h, { organizationId, userId: 'a' }))).toEqual([]);
      expect(ids(await get(h, { organizationId, userId: 'b' }))).toEqual(['r']);
      expect(ids(await get(h, { organizationId, userId: 'c' }))).toEqual(['r']);
    });

    it('with verifyUserPermissions marks only readers with access', async () => {
      const organizationId = uniqueId('org');
      await users(h, { organizationId, users: [{ userId: 'member' }] });
      await add(h, base(organizationId, { notificationId: 'v' }));

      await update(h, {
        organizationId,
        verifyUserPermissions: true,
        notifications: [{ id: 'v', readByUserIds: ['member', 'stranger'] }],
      });

      expect((await get(h, { organizationId })).body.result?.data[0].readByUserIds).toEqual(['member']);
    });

    it('treats a notification of another document as not existing', async () => {
      const organizationId = uniqueId('org');
      await add(h, base(organizationId, { notificationId: 'x' }));

      const response = await update(h, {
        organizationId,
        documentId: 'other',
        notifications: [{ id: 'x', displayBodyMessage: 'no' }],
      });

      expect(response.body.result?.data.x.success).toBe(false);
    });

    it.each([
      [
        'in a list',
        [{ id: 'ok' }, { id: '', displayBodyMessage: 5 }],
        ['data.notifications.1.id', 'data.notifications.1.displayBodyMessage'],
      ],
      ['as the one object', { id: 'ok', notificationSourceData: [1] }, ['data.notifications.notificationSourceData']],
    ])(
      'names the fields of a bad notification %s, not only "notifications: Invalid input"',
      async (_, notifications, paths) => {
        const response = await update(h, { organizationId: uniqueId('org'), notifications });

        expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
        expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual(
          paths.sort(),
        );
      },
    );
  });

  describe('delete', () => {
    it('refuses an organization with no other filter', async () => {
      const response = await remove(h, { organizationId: 'o' });

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    });

    it('with userId removes the notification from that feed only', async () => {
      const organizationId = uniqueId('org');
      await add(h, base(organizationId, { notificationId: 'd', notifyUsers: [{ userId: 'a' }, { userId: 'b' }] }));

      const response = await invoke(
        deleteNotifications,
        '/v1/notifications/delete',
        { organizationId, userId: 'a' },
        { headers: h },
      );

      expect(response.body.result?.data).toEqual({
        d: { success: true, message: 'Notification removed for the user.' },
      });
      expect(ids(await get(h, { organizationId, userId: 'a' }))).toEqual([]);
      expect(ids(await get(h, { organizationId, userId: 'b' }))).toEqual(['d']);
      expect(ids(await get(h, { organizationId }))).toEqual(['d']);
    });

    it('with documentId deletes the notifications and every feed entry; unknown ids are reported', async () => {
      const organizationId = uniqueId('org');
      await add(h, base(organizationId, { notificationId: 'gone', notifyUsers: [{ userId: 'a' }] }));
      await add(
        h,
        base(organizationId, { notificationId: 'kept', documentId: 'other', notifyUsers: [{ userId: 'a' }] }),
      );

      const byDocument = await remove(h, { organizationId, documentId: 'doc' });
      const byId = await remove(h, { organizationId, notificationIds: ['nope'] });

      expect(byDocument.body.result?.data).toEqual({ gone: { success: true, message: 'Notification deleted.' } });
      expect(byId.body.result?.data).toEqual({ nope: { success: false, message: 'Notification does not exist.' } });
      expect(ids(await get(h, { organizationId }))).toEqual(['kept']);
      expect(ids(await get(h, { organizationId, userId: 'a' }))).toEqual(['kept']);
    });

    it('with locationId alone deletes the notifications of that location across the organization', async () => {
      const organizationId = uniqueId('org');
      await add(
        h,
        base(organizationId, { notificationId: 'here', locationId: 'loc-1', notifyUsers: [{ userId: 'a' }] }),
      );
      await add(
        h,
        base(organizationId, {
          notificationId: 'there',
          locationId: 'loc-2',
          documentId: 'other',
          notifyUsers: [{ userId: 'a' }],
        }),
      );

      const response = await remove(h, { organizationId, locationId: 'loc-1' });

      expect(response.body.result?.data).toEqual({ here: { success: true, message: 'Notification deleted.' } });
      expect(ids(await get(h, { organizationId }))).toEqual(['there']);
      expect(ids(await get(h, { organizationId, userId: 'a' }))).toEqual(['there']);
    });
  });

  describe('config', () => {
    it('falls back from document to organization to ALL, field by field', async () => {
      const organizationId = uniqueId('org');
      await configSet(h, { organizationId, userIds: ['u'], config: { email: 'NONE' } });
      await configSet(h, { organizationId, userIds: ['u'], documentIds: ['d1'], config: { inbox: 'MINE' } });

      const response = await configGet(h, {
        organizationId,
        userId: 'u',
        documentIds: ['d1', 'd2'],
        getOrganizationConfig: true,
      });
      const fresh = await configGet(h, { organizationId, userId: 'someone-else', getOrganizationConfig: true });

      expect(response.body.result?.data).toEqual([
        { config: { inbox: 'ALL', email: 'NONE' }, metadata: { organizationId, apiKey: tenant.apiKeyId, userId: 'u' } },
        {
          config: { inbox: 'MINE', email: 'NONE' },
          metadata: { organizationId, apiKey: tenant.apiKeyId, userId: 'u', documentId: 'd1' },
        },
        {
          config: { inbox: 'ALL', email: 'NONE' },
          metadata: { organizationId, apiKey: tenant.apiKeyId, userId: 'u', documentId: 'd2' },
        },
      ]);
      expect(fresh.body.result?.data).toEqual([
        { config: { inbox: 'ALL', email: 'ALL' }, metadata: expect.objectContaining({ userId: 'someone-else' }) },
      ]);
    });

    it('keeps the level not given when setting the other', async () => {
      const organizationId = uniqueId('org');
      await configSet(h, { organizationId, userIds: ['u'], config: { inbox: 'NONE', email: 'MINE' } });

      const set = await configSet(h, { organizationId, userIds: ['u'], config: { inbox: 'ALL' } });

      expect(set.body.result?.data).toEqual({ u: { success: true, userId: 'u', message: 'Notification config set.' } });
      expect(
        (await configGet(h, { organizationId, userId: 'u', getOrganizationConfig: true })).body.result?.data[0].config,
      ).toEqual({ inbox: 'ALL', email: 'MINE' });
    });

    it('keeps both levels when concurrent requests set one each, at the organization and at a document', async () => {
      const organizationId = uniqueId('org');

      const replies = await Promise.all(
        Array.from({ length: 60 }, (_, i) => {
          const atDocument = i % 4 >= 2;
          const levels = atDocument ? { inbox: 'MINE', email: 'NONE' } : { inbox: 'NONE', email: 'MINE' };
          const config = i % 2 === 0 ? { inbox: levels.inbox } : { email: levels.email };
          return configSet(h, {
            organizationId,
            userIds: ['u'],
            ...(atDocument ? { documentIds: ['d1'] } : {}),
            config,
          });
        }),
      );
      const read = await configGet(h, {
        organizationId,
        userId: 'u',
        documentIds: ['d1'],
        getOrganizationConfig: true,
      });

      expect(replies.map((reply) => reply.statusCode)).toEqual(replies.map(() => 200));
      expect(read.body.result?.data.map((entry: { config: unknown }) => entry.config)).toEqual([
        { inbox: 'NONE', email: 'MINE' },
        { inbox: 'MINE', email: 'NONE' },
      ]);
    });

    it.each([
      ['neither documentIds nor getOrganizationConfig', configGet, { organizationId: 'o', userId: 'u' }],
      [
        '31 documentIds',
        configGet,
        { organizationId: 'o', userId: 'u', documentIds: Array.from({ length: 31 }, (_, i) => `d${i}`) },
      ],
      ['a missing userId', configGet, { organizationId: 'o', getOrganizationConfig: true }],
      ['an unknown level', configSet, { organizationId: 'o', userIds: ['u'], config: { inbox: 'SOME' } }],
      ['an empty config', configSet, { organizationId: 'o', userIds: ['u'], config: {} }],
    ])('rejects %s with INVALID_ARGUMENT', async (_, fn, data) => {
      const response = await fn(h, data);

      expect(response.statusCode).toBe(400);
    });
  });

  it('keeps one API key’s notifications and settings away from a sibling key and another workspace', async () => {
    const organizationId = uniqueId('org');
    await add(h, base(organizationId, { notificationId: 'mine', notifyUsers: [{ userId: 'u' }] }));
    await configSet(h, { organizationId, userIds: ['u'], config: { inbox: 'NONE' } });
    const others = [await siblingKey(tenant), (await newTenant()).apiKeyHeaders];

    for (const other of others) {
      expect(ids(await get(other, { organizationId }))).toEqual([]);
      expect(ids(await get(other, { organizationId, userId: 'u' }))).toEqual([]);
      expect(
        (await update(other, { organizationId, notifications: [{ id: 'mine', displayBodyMessage: 'x' }] })).body.result
          ?.data.mine.success,
      ).toBe(false);
      expect((await remove(other, { organizationId, notificationIds: ['mine'] })).body.result?.data.mine.success).toBe(
        false,
      );
      expect(
        (await configGet(other, { organizationId, userId: 'u', getOrganizationConfig: true })).body.result?.data[0]
          .config.inbox,
      ).toBe('ALL');
    }
    expect(ids(await get(h, { organizationId, userId: 'u' }))).toEqual(['mine']);
  });
});
