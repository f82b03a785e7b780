/** Activity logs over HTTP against the local stack: refused until enabled, added, read in pages, immutable ids. */
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('activities over HTTP', () => {
  it('refuses writes until enabled, then adds records, reads them in pages and keeps them immutable', async () => {
    const headers = await newApiKeyHeaders();
    const organizationId = uniqueId('org');
    const activities = [
      {
        id: 'a1',
        featureType: 'comment',
        actionType: 'comment.add',
        actionUser: { userId: 'u1' },
        targetEntityId: 'ann-1',
      },
      {
        id: 'a2',
        featureType: 'custom',
        actionType: 'custom.approve',
        targetEntityId: 'ann-1',
        entityData: { decision: 'approved' },
      },
      { id: 'a3', featureType: 'reaction', actionType: 'reaction.add', actionUser: { userId: 'u2' } },
    ];

    const refused = await post('/v2/activities/add', { organizationId, activities }, headers);
    await post(
      '/v2/workspace/activityconfig/update',
      { activityServiceConfig: { isEnabled: true, triggers: { comment: { 'comment.add': false } } } },
      headers,
    );
    const added = await post('/v2/activities/add', { organizationId, documentId: 'doc', activities }, headers);
    const first = await post('/v2/activities/get', { organizationId, documentId: 'doc', pageSize: 1 }, headers);
    const second = await post(
      '/v2/activities/get',
      { organizationId, documentId: 'doc', pageSize: 1, pageToken: first.body.result.pageToken },
      headers,
    );
    const byTarget = await post('/v2/activities/get', { organizationId, targetEntityId: 'ann-1' }, headers);
    const conflict = await post(
      '/v2/activities/add',
      { organizationId, documentId: 'doc', activities: [{ ...activities[1], entityData: { decision: 'rejected' } }] },
      headers,
    );

    expect(refused.status).toBe(400);
    expect(refused.body.error.status).toBe('FAILED_PRECONDITION');
    expect(added.body.result.data).toEqual({
      success: true,
      message: '2 activities added; 1 activity skipped (comment trigger switched off).',
    });
    expect(first.body.result.data.map((a: { id: string }) => a.id)).toEqual(['a3']);
    expect(second.body.result.data).toEqual([
      {
        ...activities[1],
        metadata: { apiKey: headers['x-service-api-key'], organizationId, documentId: 'doc' },
        timestamp: expect.any(Number),
      },
    ]);
    expect(second.body.result.pageToken).toBeUndefined();
    expect(byTarget.body.result.data.map((a: { id: string }) => a.id)).toEqual(['a2']);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.status).toBe('ALREADY_EXISTS');
  });
});
