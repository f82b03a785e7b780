/** Suggest Decision over HTTP against the local stack: judgments added as activities, then suggested from. */
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

const judgment = (decision: 'accept' | 'reject', reviewer: string, reason: string) => ({
  featureType: 'comment',
  actionType: `comment_annotation.suggestion_${decision}`,
  actionUser: { userId: reviewer },
  entityTargetData: { suggestion: 'Use the metric system in the product specification' },
  entityData: { reason },
});

describe('suggest decision over HTTP', () => {
  it('suggests from judgments added as activities, widening from a document without precedent', async () => {
    const headers = await newApiKeyHeaders();
    const organizationId = uniqueId('org');
    await post('/v2/workspace/activityconfig/update', { activityServiceConfig: { isEnabled: true } }, headers);
    const added = await post(
      '/v2/activities/add',
      {
        organizationId,
        documentId: 'spec',
        activities: [
          judgment('accept', 'ann', 'Customers are in Europe'),
          judgment('accept', 'bob', 'Matches the supplier data'),
          judgment('accept', 'cat', 'Customers are in Europe'),
          judgment('reject', 'dan', 'Too late to change'),
          {
            featureType: 'comment',
            actionType: 'comment.add',
            actionUser: { userId: 'eve' },
            entityData: { text: 'metric system?' },
          },
        ],
      },
      headers,
    );

    const inDocument = await post(
      '/v2/memory/suggest',
      { query: 'metric system for the specification', organizationId, documentId: 'spec' },
      headers,
    );
    const elsewhere = await post(
      '/v2/memory/suggest',
      { query: 'metric system for the specification', organizationId, documentId: 'other' },
      headers,
    );
    const invalid = await post('/v2/memory/suggest', { query: 'metric', documentId: 'spec' }, headers);

    expect(added.status).toBe(200);
    expect(inDocument.status).toBe(200);
    expect(inDocument.body).toEqual({
      result: {
        primary: {
          recommendation: 'approve',
          confidence: expect.any(Number),
          basedOn: 3,
          scope: 'document',
          scopeLabel: 'This document',
          topReasons: ['Customers are in Europe', 'Matches the supplier data'],
          uniqueReviewers: 3,
          caveats: [
            'Split evidence: 1 of 4 relevant judgments went the other way.',
            'Recent opposite judgment: a relevant judgment in the last 48 hours went the other way.',
          ],
        },
        conflict: null,
      },
    });
    expect(elsewhere.body.result.primary).toMatchObject({
      recommendation: 'approve',
      scope: 'organization',
      scopeLabel: 'This organization',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.status).toBe('INVALID_ARGUMENT');
    expect(invalid.body.error.details.issues).toEqual([
      { path: 'data.documentId', message: 'Requires organizationId.' },
    ]);
  });
});
