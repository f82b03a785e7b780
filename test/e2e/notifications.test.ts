/** Notifications over HTTP against the local stack: add, read a feed, mark read, delete from one feed, settings. */
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('notifications over HTTP', () => {
  it('adds, reads, updates and deletes notifications, and sets a user’s settings', async () => {
    const headers = await newApiKeyHeaders();
    const organizationId = uniqueId('org');
    const base = {
      organizationId,
      documentId: 'doc',
      createOrganization: true,
      createDocument: true,
      actionUser: { userId: 'actor' },
      displayHeadlineMessageTemplate: 'Hi',
    };

    const added = await post(
      '/v2/notifications/add',
      { ...base, notifyUsers: [{ userId: 'a' }, { userId: 'b' }] },
      headers,
    );
    const id = added.body.result.data.notificationId as string;
    const feed = await post('/v2/notifications/get', { organizationId, userId: 'a' }, headers);
    const updated = await post(
      '/v2/notifications/update',
      { organizationId, notifications: [{ id, readByUserIds: ['b'], persistReadForUsers: true }] },
      headers,
    );
    const deleted = await post('/v2/notifications/delete', { organizationId, userId: 'a' }, headers);
    const feedB = await post('/v2/notifications/get', { organizationId, userId: 'b' }, headers);
    const set = await post(
      '/v2/notifications/config/set',
      { organizationId, userIds: ['a'], config: { inbox: 'MINE' } },
      headers,
    );
    const config = await post(
      '/v2/notifications/config/get',
      { organizationId, userId: 'a', getOrganizationConfig: true },
      headers,
    );

    expect(feed.body.result.data.map((n: { id: string }) => n.id)).toEqual([id]);
    expect(updated.body.result.data[id].success).toBe(true);
    expect(deleted.body.result.data[id].success).toBe(true);
    expect(feedB.body.result.data[0].readByUserIds).toEqual(['b']);
    expect(set.body.result.data.a.success).toBe(true);
    expect(config.body.result.data[0].config).toEqual({ inbox: 'MINE', email: 'ALL' });
  });
});
