/**
 * docs/api.md "The contract: openapi.json and a typed client", as a customer's engineer uses it: a client generated from the published
 * openapi.json (openapi-typescript types, openapi-fetch calls) drives a whole integration against the local stack
 * with no casts. `npm run typecheck` checks this file, so a result the document types wrongly fails there; every
 * response is also held against the document at run time (test/support/contract.ts).
 */
import createClient from 'openapi-fetch';
import type { paths } from '../support/openapi-types';
import { checkResponse } from '../support/contract';
import { baseUrl } from '../support/http';
import { uniqueEmail, uniqueId } from '../support/ids';

function client(headers: Record<string, string> = {}) {
  const api = createClient<paths>({ baseUrl: baseUrl(), headers });
  api.use({
    async onResponse({ request, response }) {
      const text = await response.clone().text();
      checkResponse(new URL(request.url).pathname, response.status, text ? JSON.parse(text) : undefined);
      return response;
    },
  });
  return api;
}

describe('a client generated from openapi.json', () => {
  it('creates a workspace, adds users, notifies them, logs activities, writes editor data and pages through users', async () => {
    const created = await client().POST('/v2/workspace/create', {
      body: { data: { ownerEmail: uniqueEmail('typed') } },
    });
    const workspace = created.data?.result.data;
    if (workspace === undefined) throw new Error(`create failed: ${JSON.stringify(created.error)}`);
    const apiKey = Object.keys(workspace.apiKeyList)[0];
    const asOwner = client({
      'x-service-workspace-id': workspace.id,
      'x-service-workspace-auth-token': workspace.authToken,
    });
    const tokens = await asOwner.POST('/v2/workspace/authtokens/get', { body: { data: { apiKey } } });
    const token = tokens.data?.result.data.authTokens[0]?.token ?? '';
    const api = client({ 'x-service-api-key': apiKey, 'x-service-auth-token': token });
    const organizationId = uniqueId('org');

    const users = await api.POST('/v2/users/add', {
      body: {
        data: {
          organizationId,
          users: [
            { userId: 'ann', name: 'Ann' },
            { userId: 'bob', name: 'Bob' },
            { userId: 'cy', name: 'Cy' },
          ],
        },
      },
    });
    const notified = await api.POST('/v2/notifications/add', {
      body: {
        data: {
          organizationId,
          documentId: 'doc',
          createDocument: true,
          actionUser: { userId: 'ann' },
          displayHeadlineMessageTemplate: '{{actionUser}} mentioned you',
          notifyUsers: [{ userId: 'bob' }],
        },
      },
    });
    const feed = await api.POST('/v2/notifications/get', { body: { data: { organizationId, userId: 'bob' } } });
    await api.POST('/v2/workspace/activityconfig/update', {
      body: { data: { activityServiceConfig: { isEnabled: true } } },
    });
    const logged = await api.POST('/v2/activities/add', {
      body: {
        data: {
          organizationId,
          documentId: 'doc',
          activities: [{ featureType: 'comment', actionType: 'comment.add', actionUser: { userId: 'ann' } }],
        },
      },
    });
    const log = await api.POST('/v2/activities/get', { body: { data: { organizationId, documentId: 'doc' } } });
    await api.POST('/v2/crdt/add', {
      body: { data: { organizationId, documentId: 'doc', editorId: 'title', type: 'text', data: 'Hello' } },
    });
    const editor = await api.POST('/v2/crdt/get', {
      body: { data: { organizationId, documentId: 'doc', editorId: 'title' } },
    });
    const first = await api.POST('/v2/users/get', { body: { data: { organizationId, pageSize: 2 } } });
    const next = await api.POST('/v2/users/get', {
      body: { data: { organizationId, pageSize: 2, pageToken: first.data?.result.nextPageToken } },
    });

    expect(users.data?.result.data.ann?.success).toBe(true);
    const notificationId = notified.data?.result.data.notificationId;
    expect(feed.data?.result.data.map((notification) => notification.id)).toEqual([notificationId]);
    expect(logged.response.status).toBe(200);
    expect(log.data?.result.data.map((record) => record.actionType)).toEqual(['comment.add']);
    expect(editor.data?.result.data[0]?.data).toBe('Hello');
    const names = [first.data?.result.data, next.data?.result.data].flatMap((page) =>
      Array.isArray(page) ? page.map((user) => user.name) : [],
    );
    expect(names).toEqual(['Ann', 'Bob', 'Cy']);
  });
});
