import { handler as addActivitiesHandler } from '../../functions/activities/add';
import { handler as suggestHandler } from '../../functions/memory/suggest';
import { handler as updateConfig } from '../../functions/workspace/activityconfig-update';
import { getMigration } from '../../shared/db/migration';
import { addActivities } from '../../shared/domain/activities';
import { runMigration } from '../../shared/domain/migration';
import { MAX_QUERY_LENGTH } from '../../shared/domain/suggestions';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint, routeCaller, type Credentials } from '../support/invoke';
import { uniqueId } from '../support/ids';

type Decision = 'approve' | 'reject';

const DAY = 24 * 60 * 60 * 1000;
const MATTER = 'Rename the checkout button to "Pay now"';
const QUERY = 'rename the checkout button';
const UNRELATED = 'Switch the analytics dashboard to dark mode';

const suggest = endpoint(suggestHandler, '/v2/memory/suggest');
const postActivities = endpoint(addActivitiesHandler, '/v2/activities/add');
const updateActivityConfig = endpoint(updateConfig, '/v2/workspace/activityconfig/update');

/** A judgment record as a client sends it: an accepted or rejected suggestion on `matter`. */
function judgment(decision: Decision, reviewer: string, fields: Record<string, unknown> = {}) {
  return {
    featureType: 'comment' as const,
    actionType:
      decision === 'approve' ? 'comment_annotation.suggestion_accept' : 'comment_annotation.suggestion_reject',
    actionUser: { userId: reviewer },
    entityTargetData: { suggestion: MATTER },
    entityData: { reason: `${decision} because of ${reviewer}` },
    ...fields,
  };
}

/** `n` judgments, each from a new reviewer. */
const judgments = (n: number, decision: Decision, fields: Record<string, unknown> = {}) =>
  Array.from({ length: n }, () => judgment(decision, uniqueId('user'), fields));

async function add(
  who: Credentials,
  data: { organizationId: string; documentId?: string; activities: unknown[] },
): Promise<void> {
  const response = await postActivities(who, data);
  if (response.statusCode !== 200) throw new Error(JSON.stringify(response.body));
}

async function enable(who: Credentials, config: Record<string, unknown> = {}): Promise<void> {
  const response = await updateActivityConfig(who, { activityServiceConfig: { isEnabled: true, ...config } });
  if (response.statusCode !== 200) throw new Error(JSON.stringify(response.body));
}

async function suggestion(who: Credentials, data: Record<string, unknown>) {
  const response = await suggest(who, data);
  if (response.statusCode !== 200) throw new Error(JSON.stringify(response.body));
  return (
    response.body as unknown as {
      result: { primary: Record<string, any> | null; conflict: Record<string, any> | null };
    }
  ).result;
}

describe('suggest decision', () => {
  let tenant: Tenant;
  let mutable: Tenant;

  beforeAll(async () => {
    [tenant, mutable] = await Promise.all([newTenant(), newTenant()]);
    await Promise.all([enable(tenant), enable(mutable, { immutable: false })]);
  });

  it('answers exactly {result: {primary, conflict}}, both null, when there is no precedent', async () => {
    const response = await suggest(tenant, { query: QUERY, organizationId: uniqueId('org') });

    expect(response.statusCode).toBe(200);
    expect(response.body).toEqual({ result: { primary: null, conflict: null } });
  });

  it('suggests nothing on fewer than 2 supporting judgments', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, { organizationId, activities: [...judgments(1, 'approve'), ...judgments(1, 'reject')] });

    expect(await suggestion(tenant, { query: QUERY, organizationId })).toEqual({ primary: null, conflict: null });
  });

  it('suggests the decision of 3 approvals over 2 rejections, with the rejections as conflict and a split caveat', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, {
      organizationId,
      documentId: 'doc',
      activities: [...judgments(3, 'approve'), ...judgments(2, 'reject')],
    });

    const { primary, conflict } = await suggestion(tenant, { query: QUERY, organizationId, documentId: 'doc' });

    expect(primary).toEqual({
      recommendation: 'approve',
      confidence: expect.any(Number),
      basedOn: 3,
      scope: 'document',
      scopeLabel: 'This document',
      topReasons: expect.arrayContaining([expect.stringMatching(/^approve because of user-/)]),
      uniqueReviewers: 3,
      caveats: [
        'Split evidence: 2 of 5 relevant judgments went the other way.',
        'Recent opposite judgment: a relevant judgment in the last 48 hours went the other way.',
      ],
    });
    expect(primary?.topReasons).toHaveLength(3);
    expect(conflict).toMatchObject({ recommendation: 'reject', basedOn: 2, uniqueReviewers: 2, scope: 'document' });
    expect(conflict?.caveats).toContain('Split evidence: 3 of 5 relevant judgments went the other way.');
    expect(conflict?.confidence).toBeLessThan(primary?.confidence);
    expect(primary?.confidence).toBeGreaterThan(0);
    expect(primary?.confidence).toBeLessThanOrEqual(1);
  });

  it('counts records whose entityData.decision is a decision value, whatever their action type', async () => {
    const organizationId = uniqueId('org');
    const custom = (decision: string) => ({
      featureType: 'custom',
      actionType: 'custom.review',
      targetEntityId: uniqueId('t'),
      actionUser: { userId: uniqueId('user') },
      entityData: { decision, title: MATTER, reason: 'Off brand' },
    });
    await add(tenant, { organizationId, activities: [custom('rejected'), custom('disagree'), custom('maybe')] });

    const { primary } = await suggestion(tenant, { query: QUERY, organizationId });

    expect(primary).toMatchObject({ recommendation: 'reject', basedOn: 2, topReasons: ['Off brand'] });
  });

  it('does not count judgments on an unrelated matter', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, {
      organizationId,
      activities: [
        ...judgments(2, 'approve'),
        ...judgments(4, 'reject', { entityTargetData: { suggestion: UNRELATED } }),
      ],
    });

    const { primary, conflict } = await suggestion(tenant, { query: QUERY, organizationId });

    expect(primary).toMatchObject({ recommendation: 'approve', basedOn: 2, caveats: [] });
    expect(conflict).toBeNull();
    expect(await suggestion(tenant, { query: 'quarterly revenue forecast spreadsheet', organizationId })).toEqual({
      primary: null,
      conflict: null,
    });
  });

  it('widens a document without precedent to its organization, and says so', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, { organizationId, documentId: 'judged', activities: judgments(2, 'reject') });

    const narrow = await suggestion(tenant, { query: QUERY, organizationId, documentId: 'judged' });
    const widened = await suggestion(tenant, { query: QUERY, organizationId, documentId: 'fresh' });

    expect(narrow.primary).toMatchObject({ recommendation: 'reject', scope: 'document', scopeLabel: 'This document' });
    expect(widened.primary).toMatchObject({
      recommendation: 'reject',
      basedOn: 2,
      scope: 'organization',
      scopeLabel: 'This organization',
    });
  });

  it('widens an organization without precedent to all content of the API key', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, {
      organizationId,
      activities: judgments(2, 'approve', {
        entityTargetData: { suggestion: 'Translate the onboarding wizard into Portuguese' },
      }),
    });

    const { primary } = await suggestion(tenant, {
      query: 'portuguese onboarding wizard translation',
      organizationId: uniqueId('org'),
    });

    expect(primary).toMatchObject({ recommendation: 'approve', scope: 'apiKey', scopeLabel: 'All content' });
  });

  it('does not count an activity of another organization in an organization scope', async () => {
    const [mine, other] = [uniqueId('org'), uniqueId('org')];
    await add(tenant, { organizationId: mine, activities: judgments(2, 'approve') });
    await add(tenant, { organizationId: other, activities: judgments(3, 'reject') });

    const { primary, conflict } = await suggestion(tenant, { query: QUERY, organizationId: mine });

    expect(primary).toMatchObject({ recommendation: 'approve', basedOn: 2, scope: 'organization', caveats: [] });
    expect(conflict).toBeNull();
  });

  it('raises confidence as agreeing judgments from new reviewers come in', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, { organizationId, activities: judgments(2, 'approve') });
    const before = (await suggestion(tenant, { query: QUERY, organizationId })).primary?.confidence;

    await add(tenant, { organizationId, activities: judgments(3, 'approve') });
    const after = (await suggestion(tenant, { query: QUERY, organizationId })).primary?.confidence;

    expect(after).toBeGreaterThan(before);
  });

  it('names a single reviewer', async () => {
    const organizationId = uniqueId('org');
    await add(tenant, {
      organizationId,
      activities: [judgment('reject', 'solo'), judgment('reject', 'solo'), judgment('reject', 'solo')],
    });

    const { primary } = await suggestion(tenant, { query: QUERY, organizationId });

    expect(primary).toMatchObject({
      uniqueReviewers: 1,
      basedOn: 3,
      caveats: ['Single reviewer: all 3 supporting judgments come from one reviewer.'],
    });
  });

  it('names a stale basis when most supporting judgments are older than 180 days', async () => {
    const organizationId = uniqueId('org');
    // The server sets timestamps: old judgments are written through the domain function with its clock.
    await addActivities(
      tenant.apiKeyId,
      { organizationId, activities: judgments(3, 'approve') },
      Date.now() - 200 * DAY,
    );

    const { primary } = await suggestion(tenant, { query: QUERY, organizationId });

    expect(primary?.caveats).toEqual(['Stale basis: 3 of 3 supporting judgments are older than 180 days.']);
    expect(primary?.confidence).toBeLessThan(0.6);
  });

  it('names an opposite judgment of the last 48 hours', async () => {
    const organizationId = uniqueId('org');
    await addActivities(
      tenant.apiKeyId,
      { organizationId, activities: judgments(3, 'approve') },
      Date.now() - 10 * DAY,
    );
    await add(tenant, { organizationId, activities: judgments(1, 'reject') });

    const { primary, conflict } = await suggestion(tenant, { query: QUERY, organizationId });

    expect(primary?.recommendation).toBe('approve');
    expect(primary?.caveats).toEqual([
      'Split evidence: 1 of 4 relevant judgments went the other way.',
      'Recent opposite judgment: a relevant judgment in the last 48 hours went the other way.',
    ]);
    expect(conflict).toBeNull();
  });

  it('never lets the judgments of another API key of the same workspace, or of another workspace, count', async () => {
    const organizationId = uniqueId('org');
    // A tenant of its own, so that its all-content scope holds only this test's judgments.
    const own = await newTenant();
    const sibling = await siblingKey(own);
    const stranger = await newTenant();
    await Promise.all([enable(own), enable(sibling), enable(stranger)]);
    await add(sibling, { organizationId, documentId: 'doc', activities: judgments(5, 'reject') });
    await add(stranger, { organizationId, documentId: 'doc', activities: judgments(5, 'reject') });
    await add(own, { organizationId, documentId: 'doc', activities: judgments(2, 'approve') });

    for (const data of [{ query: QUERY, organizationId, documentId: 'doc' }, { query: QUERY }]) {
      const { primary, conflict } = await suggestion(own, data);
      expect(primary).toMatchObject({ recommendation: 'approve', basedOn: 2, caveats: [] });
      expect(conflict).toBeNull();
    }
  });

  describe('in a mutable log', () => {
    it('forgets a judgment overwritten by a record that is not one', async () => {
      const organizationId = uniqueId('org');
      const [first, second] = [judgment('approve', 'u1', { id: 'j1' }), judgment('approve', 'u2', { id: 'j2' })];
      await add(mutable, { organizationId, activities: [first, second] });
      expect((await suggestion(mutable, { query: QUERY, organizationId })).primary).toMatchObject({ basedOn: 2 });

      await add(mutable, {
        organizationId,
        activities: [{ ...second, actionType: 'comment.update', entityData: { text: 'edited' } }],
      });

      expect(await suggestion(mutable, { query: QUERY, organizationId })).toEqual({ primary: null, conflict: null });
    });

    it('moves a judgment re-put under another documentId to that document', async () => {
      const organizationId = uniqueId('org');
      const records = [judgment('reject', 'u1', { id: 'm1' }), judgment('reject', 'u2', { id: 'm2' })];
      await add(mutable, { organizationId, documentId: 'before', activities: records });

      await add(mutable, { organizationId, documentId: 'after', activities: records });

      const before = await suggestion(mutable, { query: QUERY, organizationId, documentId: 'before' });
      const after = await suggestion(mutable, { query: QUERY, organizationId, documentId: 'after' });
      expect(before.primary?.scope).toBe('organization');
      expect(after.primary).toMatchObject({ scope: 'document', basedOn: 2 });
    });
  });

  it('follows a document migration: the judgments count for the new document id, not the old one', async () => {
    const organizationId = uniqueId('org');
    const call = routeCaller(() => tenant);
    await call('/v2/organizations/documents/add', {
      organizationId,
      createOrganization: true,
      documents: [{ documentId: 'old' }],
    });
    await add(tenant, { organizationId, documentId: 'old', activities: judgments(2, 'approve') });
    const started = await call('/v2/organizations/documents/migrate', {
      organizationId,
      documentId: 'old',
      newDocumentId: 'new',
    });
    const migration = await getMigration(tenant.apiKeyId, organizationId, started.body.result?.data.migrationId);
    if (migration === undefined) throw new Error(JSON.stringify(started.body));

    expect(await runMigration(migration, { deadline: Date.now() + 60_000 })).toBe('completed');

    expect((await suggestion(tenant, { query: QUERY, organizationId, documentId: 'new' })).primary).toMatchObject({
      scope: 'document',
      basedOn: 2,
    });
    expect((await suggestion(tenant, { query: QUERY, organizationId, documentId: 'old' })).primary).toMatchObject({
      scope: 'organization',
      basedOn: 2,
    });
  });

  describe('bad input', () => {
    it('answers INVALID_ARGUMENT for a documentId without organizationId', async () => {
      const response = await suggest(tenant, { query: QUERY, documentId: 'doc' });

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(response.body.error?.details.issues).toEqual([
        { path: 'data.documentId', message: 'Requires organizationId.' },
      ]);
    });

    it.each([
      ['a missing query', {}, 'data.query'],
      ['an empty query', { query: '' }, 'data.query'],
      ['a blank query', { query: '  \n ' }, 'data.query'],
      ['a query that is not a string', { query: 42 }, 'data.query'],
      ['a query over the limit', { query: 'x'.repeat(MAX_QUERY_LENGTH + 1) }, 'data.query'],
      ['an organizationId that is not a string', { query: QUERY, organizationId: ['o'] }, 'data.organizationId'],
      ['an empty organizationId', { query: QUERY, organizationId: '' }, 'data.organizationId'],
      ['a documentId that is not a string', { query: QUERY, organizationId: 'o', documentId: 7 }, 'data.documentId'],
      [
        'a documentId over 256 characters',
        { query: QUERY, organizationId: 'o', documentId: 'd'.repeat(257) },
        'data.documentId',
      ],
    ])('answers INVALID_ARGUMENT naming the field for %s', async (_, data, path) => {
      const response = await suggest(tenant, data);

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path)).toEqual([path]);
    });

    it('accepts a query of exactly the limit, and ids with separators, without a 500', async () => {
      for (const data of [
        { query: 'x'.repeat(MAX_QUERY_LENGTH) },
        { query: '#%~ ?!', organizationId: 'a#b', documentId: '~%#' },
        { query: 'ünïcödé ✓ 名前', organizationId: 'o'.repeat(256), documentId: 'd'.repeat(256) },
      ]) {
        const response = await suggest(tenant, data);
        expect(response.statusCode).toBe(200);
        expect(response.body).toEqual({ result: { primary: null, conflict: null } });
      }
    });
  });
});
