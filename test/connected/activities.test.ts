import { handler as addActivities } from '../../functions/activities/add';
import { handler as getActivities } from '../../functions/activities/get';
import { handler as updateConfig } from '../../functions/workspace/activityconfig-update';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint, type Invocation, type Credentials } from '../support/invoke';
import { uniqueId } from '../support/ids';

const add = endpoint(addActivities, '/v2/activities/add');
const get = endpoint(getActivities, '/v2/activities/get');
const updateActivityConfig = endpoint(updateConfig, '/v2/workspace/activityconfig/update');
const configure = (who: Credentials, activityServiceConfig: unknown) =>
  updateActivityConfig(who, { activityServiceConfig });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (response: Invocation) => (response.body.result?.data as Array<{ id: string }>).map((a) => a.id);
const comment = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  featureType: 'comment',
  actionType: 'comment.update',
  ...extra,
});

/** Every page of a query, following page tokens: the ids of each page and whether each page carried a token. */
async function allPages(who: Credentials, query: Record<string, unknown>) {
  const pages: string[][] = [];
  const tokens: boolean[] = [];
  let pageToken: string | undefined;
  do {
    const response = await get(who, { ...query, ...(pageToken ? { pageToken } : {}) });
    if (response.statusCode !== 200) throw new Error(JSON.stringify(response.body));
    pages.push(ids(response));
    pageToken = response.body.result?.pageToken;
    tokens.push(pageToken !== undefined);
  } while (pageToken && pages.length < 100);
  return { pages, tokens, all: pages.flat() };
}

/** A tenant with activity logs enabled (seeded defaults: immutable, every comment trigger on). */
async function enabledTenant(config: Record<string, unknown> = {}): Promise<Tenant> {
  const tenant = await newTenant();
  const response = await configure(tenant, { isEnabled: true, ...config });
  if (response.statusCode !== 200) throw new Error(JSON.stringify(response.body));
  return tenant;
}

describe('activities', () => {
  let tenant: Tenant;
  let mutable: Tenant;

  beforeAll(async () => {
    [tenant, mutable] = await Promise.all([enabledTenant(), enabledTenant({ immutable: false })]);
  });

  describe('add', () => {
    it('answers FAILED_PRECONDITION when activity logs were never enabled, and stores nothing', async () => {
      const fresh = await newTenant();
      const organizationId = uniqueId('org');

      const response = await add(fresh, { organizationId, activities: [comment('a1')] });

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('FAILED_PRECONDITION');
      expect(ids(await get(fresh, { organizationId }))).toEqual([]);
    });

    it('answers FAILED_PRECONDITION once activity logs are disabled again', async () => {
      const other = await enabledTenant();
      await configure(other, { isEnabled: false });

      const response = await add(other, { organizationId: uniqueId('org'), activities: [comment('a1')] });

      expect(response.body.error?.status).toBe('FAILED_PRECONDITION');
    });

    it('stores every field, sets the timestamp itself and returns records with metadata', async () => {
      const organizationId = uniqueId('org');
      const record = {
        id: 'full',
        featureType: 'custom',
        actionType: 'custom.approve',
        actionUser: { userId: 'u1', email: 'u1@x.io', name: 'Ann' },
        targetEntityId: 'annotation-1',
        targetSubEntityId: 'reply-2',
        changes: { from: { status: 'open' }, to: { status: 'done' } },
        entityData: { decision: 'approved', reason: 'looks right', nested: [1, 'two', null, { three: true }] },
        entityTargetData: 'the judged text',
        displayMessageTemplate: '{{actionUser.name}} approved',
        displayMessageTemplateData: { actionUser: { name: 'Ann' } },
        actionIcon: 'https://example.com/icon.png',
        isActivityResolverUsed: false,
      };
      const before = Date.now();

      const response = await add(tenant, {
        organizationId,
        documentId: 'doc-1',
        activities: [{ ...record, timestamp: 1, metadata: { apiKey: 'forged' }, unknownField: 'x' }],
      });

      expect(response.statusCode).toBe(200);
      expect(response.body.result?.message).toBe('1 activity added.');
      expect(response.body.result?.data).toEqual({ success: true, message: '1 activity added.' });
      const read = await get(tenant, { organizationId });
      expect(read.body.result?.data).toEqual([
        {
          ...record,
          metadata: { apiKey: tenant.apiKeyId, organizationId, documentId: 'doc-1' },
          timestamp: expect.any(Number),
        },
      ]);
      expect(read.body.result?.data[0].timestamp).toBeGreaterThanOrEqual(before);
      expect(read.body.result?.data[0].timestamp).toBeLessThanOrEqual(Date.now());
      expect(read.body.result?.pageToken).toBeUndefined();
      expect('pageToken' in (read.body.result ?? {})).toBe(false);
    });

    it('generates an id when none is given, and leaves documentId out of metadata for organization records', async () => {
      const organizationId = uniqueId('org');

      await add(tenant, { organizationId, activities: [{ featureType: 'reaction', actionType: 'reaction.add' }] });

      const [record] = (await get(tenant, { organizationId })).body.result?.data;
      expect(record.id).toMatch(/^act_[0-9a-f]+$/);
      expect(record.metadata).toEqual({ apiKey: tenant.apiKeyId, organizationId });
    });

    /** `levels` objects nested inside one another around 'bottom'. */
    const nested = (levels: number): unknown => {
      let deep: unknown = 'bottom';
      for (let i = 0; i < levels; i += 1) deep = { level: deep };
      return deep;
    };

    it('refuses JSON nested past the 32 levels a request may have, naming the path, and stores nothing', async () => {
      const organizationId = uniqueId('org');
      // {data} 1, data 2, activities 3, the record 4, entityData 5, its `deep` 6: 28 more objects reach level 33.
      const entityData = { deep: nested(28) };

      const added = await add(tenant, { organizationId, activities: [comment('too-deep', { entityData })] });

      expect(added.statusCode).toBe(400);
      expect(added.body.error?.details?.issues).toEqual([
        {
          path: `data.activities.0.entityData.deep${'.level'.repeat(27)}`,
          message: expect.stringContaining('at most 32 levels'),
        },
      ]);
      expect((await get(tenant, { organizationId })).body.result?.data).toEqual([]);
    });

    it('round-trips JSON nested to the 32-level limit, with the numbers DynamoDB can store', async () => {
      const organizationId = uniqueId('org');
      const deep = nested(27);
      const entityData = { large: 2 ** 53 - 1, small: 1.5e-99, negative: -0.25, empty: '', emptyList: [], deep };

      const added = await add(tenant, {
        organizationId,
        activities: [comment('json', { entityData, entityTargetData: [[[]]] })],
      });

      expect(added.statusCode).toBe(200);
      const [record] = (await get(tenant, { organizationId })).body.result?.data;
      expect(record.entityData).toEqual(entityData);
      expect(record.entityTargetData).toEqual([[[]]]);
    });

    it('answers INVALID_ARGUMENT for a custom record without targetEntityId, and stores nothing of the batch', async () => {
      const organizationId = uniqueId('org');

      const response = await add(tenant, {
        organizationId,
        activities: [comment('fine'), { id: 'bad', featureType: 'custom', actionType: 'custom.x' }],
      });

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(response.body.error?.details.issues).toEqual([
        { path: 'data.activities.1.targetEntityId', message: 'Required when featureType is custom.' },
      ]);
      expect(ids(await get(tenant, { organizationId }))).toEqual([]);
    });

    it('writes a batch of 100 records in one call', async () => {
      const organizationId = uniqueId('org');
      const activities = Array.from({ length: 100 }, (_, i) => comment(`bulk-${i}`));

      const response = await add(tenant, { organizationId, activities });

      expect(response.body.result?.message).toBe('100 activities added.');
      expect(ids(await get(tenant, { organizationId }))).toHaveLength(100);
    });

    describe('in an immutable log', () => {
      it('accepts an identical re-send without rewriting the record', async () => {
        const organizationId = uniqueId('org');
        const record = comment('same', {
          entityData: { a: 1, b: { c: [1, 2] } },
          actionUser: { userId: 'u1', name: 'Ann' },
        });
        await add(tenant, { organizationId, documentId: 'd', activities: [record] });
        const first = (await get(tenant, { organizationId })).body.result?.data[0];
        await sleep(5);

        // Same content with keys in another order: still identical.
        const reordered = {
          actionUser: { name: 'Ann', userId: 'u1' },
          entityData: { b: { c: [1, 2] }, a: 1 },
          actionType: 'comment.update',
          featureType: 'comment',
          id: 'same',
        };
        const response = await add(tenant, {
          organizationId,
          documentId: 'd',
          activities: [reordered, comment('new-one')],
        });

        expect(response.statusCode).toBe(200);
        expect(response.body.result?.message).toBe('1 activity added; 1 activity already stored unchanged.');
        const after = (await get(tenant, { organizationId, activityIds: ['same'] })).body.result?.data[0];
        expect(after).toEqual(first);
      });

      it('answers ALREADY_EXISTS for an id stored with other content, and stores nothing of the batch', async () => {
        const organizationId = uniqueId('org');
        await add(tenant, { organizationId, activities: [comment('taken', { entityData: { v: 1 } })] });

        const response = await add(tenant, {
          organizationId,
          activities: [comment('brand-new'), comment('taken', { entityData: { v: 2 } })],
        });

        expect(response.statusCode).toBe(409);
        expect(response.body.error?.status).toBe('ALREADY_EXISTS');
        expect(response.body.error?.message).toContain('taken');
        const stored = (await get(tenant, { organizationId })).body.result?.data;
        expect(stored.map((a: { id: string }) => a.id)).toEqual(['taken']);
        expect(stored[0].entityData).toEqual({ v: 1 });
      });

      it('treats the same id sent for another document as different content', async () => {
        const organizationId = uniqueId('org');
        await add(tenant, { organizationId, documentId: 'd1', activities: [comment('moved')] });

        const response = await add(tenant, { organizationId, documentId: 'd2', activities: [comment('moved')] });

        expect(response.body.error?.status).toBe('ALREADY_EXISTS');
        expect(ids(await get(tenant, { organizationId, documentId: 'd2' }))).toEqual([]);
      });

      it('lets one of two concurrent different writes of a new id win, and refuses the other', async () => {
        const organizationId = uniqueId('org');

        const responses = await Promise.all(
          [1, 2, 3].map((v) => add(tenant, { organizationId, activities: [comment('race', { entityData: { v } })] })),
        );

        expect(responses.filter((r) => r.statusCode === 200)).toHaveLength(1);
        expect(responses.filter((r) => r.body.error?.status === 'ALREADY_EXISTS')).toHaveLength(2);
        expect(ids(await get(tenant, { organizationId }))).toEqual(['race']);
      });
    });

    describe('in a mutable log', () => {
      it('overwrites an existing id with a new timestamp and moves it out of its old timelines', async () => {
        const organizationId = uniqueId('org');
        await add(mutable, {
          organizationId,
          documentId: 'old-doc',
          activities: [
            comment('over', { targetEntityId: 'old-target', actionUser: { userId: 'old-user' }, entityData: { v: 1 } }),
          ],
        });
        const first = (await get(mutable, { organizationId })).body.result?.data[0];
        await sleep(5);

        const response = await add(mutable, {
          organizationId,
          documentId: 'new-doc',
          activities: [
            comment('over', { targetEntityId: 'new-target', actionUser: { userId: 'new-user' }, entityData: { v: 2 } }),
          ],
        });

        expect(response.statusCode).toBe(200);
        const all = (await get(mutable, { organizationId })).body.result?.data;
        expect(all).toHaveLength(1);
        expect(all[0]).toMatchObject({ id: 'over', entityData: { v: 2 }, metadata: { documentId: 'new-doc' } });
        expect(all[0].timestamp).toBeGreaterThan(first.timestamp);
        expect(ids(await get(mutable, { organizationId, documentId: 'old-doc' }))).toEqual([]);
        expect(ids(await get(mutable, { organizationId, targetEntityId: 'old-target' }))).toEqual([]);
        expect(ids(await get(mutable, { organizationId, userId: 'old-user' }))).toEqual([]);
        expect(
          ids(
            await get(mutable, {
              organizationId,
              documentId: 'new-doc',
              targetEntityId: 'new-target',
              userId: 'new-user',
            }),
          ),
        ).toEqual(['over']);
      });

      it('drops fields the new version leaves out', async () => {
        const organizationId = uniqueId('org');
        await add(mutable, { organizationId, activities: [comment('slim', { actionIcon: 'x', targetEntityId: 't' })] });

        await add(mutable, { organizationId, activities: [comment('slim')] });

        const [record] = (await get(mutable, { organizationId })).body.result?.data;
        expect(record.actionIcon).toBeUndefined();
        expect(ids(await get(mutable, { organizationId, targetEntityId: 't' }))).toEqual([]);
      });
    });

    it('skips comment records whose trigger is switched off and says how many', async () => {
      const filtered = await enabledTenant({
        triggers: { comment: { 'comment.add': false, 'comment.delete': false } },
      });
      const organizationId = uniqueId('org');

      const response = await add(filtered, {
        organizationId,
        activities: [
          { id: 'off-1', featureType: 'comment', actionType: 'comment.add' },
          { id: 'on', featureType: 'comment', actionType: 'comment.update' },
          { id: 'off-2', featureType: 'comment', actionType: 'comment.delete' },
          { id: 'not-comment', featureType: 'reaction', actionType: 'comment.add' },
          { id: 'unknown-trigger', featureType: 'comment', actionType: 'comment.custom_thing' },
        ],
      });

      expect(response.body.result?.message).toBe(
        '3 activities added; 2 activities skipped (comment trigger switched off).',
      );
      expect(response.body.result?.data).toEqual({ success: true, message: response.body.result?.message });
      expect(ids(await get(filtered, { organizationId, order: 'asc' }))).toEqual([
        'on',
        'not-comment',
        'unknown-trigger',
      ]);
    });

    it('succeeds and stores nothing when every record is skipped', async () => {
      const filtered = await enabledTenant({ triggers: { comment: { 'comment.add': false } } });
      const organizationId = uniqueId('org');

      const response = await add(filtered, {
        organizationId,
        activities: [{ featureType: 'comment', actionType: 'comment.add' }],
      });

      expect(response.body.result?.message).toBe(
        '0 activities added; 1 activity skipped (comment trigger switched off).',
      );
      expect(ids(await get(filtered, { organizationId }))).toEqual([]);
    });

    const valid = comment('v');
    it.each([
      ['a missing organizationId', { activities: [valid] }, 'data.organizationId'],
      ['missing activities', { organizationId: 'o' }, 'data.activities'],
      ['an empty activities array', { organizationId: 'o', activities: [] }, 'data.activities'],
      [
        '101 activities',
        { organizationId: 'o', activities: Array.from({ length: 101 }, (_, i) => comment(`x${i}`)) },
        'data.activities',
      ],
      ['duplicate ids', { organizationId: 'o', activities: [comment('d'), comment('d')] }, 'data.activities'],
      [
        'a missing featureType',
        { organizationId: 'o', activities: [{ actionType: 'a' }] },
        'data.activities.0.featureType',
      ],
      [
        'an unknown featureType',
        { organizationId: 'o', activities: [{ featureType: 'poll', actionType: 'a' }] },
        'data.activities.0.featureType',
      ],
      [
        'a missing actionType',
        { organizationId: 'o', activities: [{ featureType: 'comment' }] },
        'data.activities.0.actionType',
      ],
      [
        'a numeric actionType',
        { organizationId: 'o', activities: [{ featureType: 'comment', actionType: 7 }] },
        'data.activities.0.actionType',
      ],
      [
        'an actionType of 201 characters',
        { organizationId: 'o', activities: [comment('l', { actionType: 'a'.repeat(201) })] },
        'data.activities.0.actionType',
      ],
      [
        'an id of 257 characters',
        { organizationId: 'o', activities: [comment('i'.repeat(257))] },
        'data.activities.0.id',
      ],
      [
        'an id with a control character',
        { organizationId: 'o', activities: [comment('a\u0000b')] },
        'data.activities.0.id',
      ],
      [
        'an actionUser without userId',
        { organizationId: 'o', activities: [comment('u', { actionUser: { name: 'x' } })] },
        'data.activities.0.actionUser.userId',
      ],
      [
        'changes that are an array',
        { organizationId: 'o', activities: [comment('c', { changes: [1] })] },
        'data.activities.0.changes',
      ],
      [
        'a string isActivityResolverUsed',
        { organizationId: 'o', activities: [comment('r', { isActivityResolverUsed: 'yes' })] },
        'data.activities.0.isActivityResolverUsed',
      ],
      [
        'a displayMessageTemplate of 5001 characters',
        { organizationId: 'o', activities: [comment('t', { displayMessageTemplate: 'x'.repeat(5001) })] },
        'data.activities.0.displayMessageTemplate',
      ],
      [
        'a record over 300 KB',
        { organizationId: 'o', activities: [comment('big', { entityData: 'x'.repeat(310 * 1024) })] },
        'data.activities.0',
      ],
    ])('rejects %s with INVALID_ARGUMENT and writes nothing', async (_, data, path) => {
      const response = await add(tenant, data);

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      expect(response.body.error?.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
      expect(ids(await get(tenant, { organizationId: 'o' }))).toEqual([]);
    });

    it('keeps numbers of any size in free-form fields (they are stored as JSON, not as DynamoDB numbers)', async () => {
      const organizationId = uniqueId('org');
      const entityData = { huge: 1e300, tiny: 1e-200, beyond: 2 ** 60 };

      const response = await add(tenant, { organizationId, activities: [comment('n', { entityData })] });
      const stored = await get(tenant, { organizationId });

      expect(response.statusCode).toBe(200);
      expect(stored.body.result?.data[0].entityData).toEqual(entityData);
    });

    it('refuses a body over 1 MiB with 413', async () => {
      const activities = Array.from({ length: 4 }, (_, i) =>
        comment(`big-${i}`, { entityData: 'x'.repeat(290 * 1024) }),
      );

      const response = await add(tenant, { organizationId: 'o', activities });

      expect(response.statusCode).toBe(413);
      expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
    });

    it('stores records close to the size limit', async () => {
      const organizationId = uniqueId('org');
      const activities = [0, 1, 2].map((i) => comment(`near-${i}`, { entityData: 'é'.repeat(145 * 1024) }));

      const response = await add(tenant, { organizationId, activities });

      expect(response.statusCode).toBe(200);
      expect(ids(await get(tenant, { organizationId, order: 'asc' }))).toEqual(['near-0', 'near-1', 'near-2']);
    });
  });

  describe('get', () => {
    const organizationId = uniqueId('org');
    // 30 records in one batch (one timestamp, read back in the order sent), spread over documents, targets, users.
    const records = Array.from({ length: 30 }, (_, i) => ({
      id: `r${String(i).padStart(2, '0')}`,
      featureType: (['comment', 'reaction', 'custom'] as const)[i % 3],
      actionType: i % 2 === 0 ? 'even.action' : 'odd.action',
      actionUser: { userId: i % 5 === 0 ? 'rare-user' : 'common-user' },
      targetEntityId: i % 4 === 0 ? 'target-a' : 'target-b',
    }));
    const byDoc = (doc: string) => records.filter((_, i) => (i < 20 ? 'doc-1' : 'doc-2') === doc);
    const asc = (list: typeof records) => list.map((r) => r.id);
    const desc = (list: typeof records) => asc(list).reverse();

    beforeAll(async () => {
      const first = await add(tenant, { organizationId, documentId: 'doc-1', activities: records.slice(0, 20) });
      // Records of one millisecond order by their place in their request: keep the two batches apart in time.
      await sleep(3);
      const second = await add(tenant, { organizationId, documentId: 'doc-2', activities: records.slice(20) });
      if (first.statusCode !== 200 || second.statusCode !== 200) throw new Error('seeding failed');
    });

    it('reads the organization newest first by default, in full pages, without a token on the last page', async () => {
      const { pages, tokens, all } = await allPages(tenant, { organizationId, pageSize: 7 });

      expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 7, 2]);
      expect(tokens).toEqual([true, true, true, true, false]);
      // The second batch was written after the first: its timestamp is not earlier.
      expect(all).toEqual([...desc(records.slice(20)), ...desc(records.slice(0, 20))]);
    });

    it('reads oldest first with order asc across pages', async () => {
      const { pages, all } = await allPages(tenant, { organizationId, pageSize: 10, order: 'asc' });

      expect(pages.map((p) => p.length)).toEqual([10, 10, 10]);
      expect(all).toEqual(asc(records));
    });

    it('ends without a token when the last page is exactly full', async () => {
      const { tokens } = await allPages(tenant, { organizationId, pageSize: 15 });

      expect(tokens).toEqual([true, false]);
    });

    it('orders by timestamp across batches', async () => {
      const organizationId2 = uniqueId('org');
      await add(tenant, { organizationId: organizationId2, activities: [comment('older')] });
      await sleep(3);
      await add(tenant, { organizationId: organizationId2, activities: [comment('newer')] });

      expect(ids(await get(tenant, { organizationId: organizationId2 }))).toEqual(['newer', 'older']);
      expect(ids(await get(tenant, { organizationId: organizationId2, order: 'asc' }))).toEqual(['older', 'newer']);
    });

    it.each([
      ['documentId', { documentId: 'doc-2' }, byDoc('doc-2')],
      ['targetEntityId', { targetEntityId: 'target-a' }, records.filter((r) => r.targetEntityId === 'target-a')],
      ['userId', { userId: 'rare-user' }, records.filter((r) => r.actionUser.userId === 'rare-user')],
      ['featureTypes', { featureTypes: ['reaction', 'custom'] }, records.filter((r) => r.featureType !== 'comment')],
      ['actionTypes', { actionTypes: ['odd.action'] }, records.filter((r) => r.actionType === 'odd.action')],
      [
        'document and user',
        { documentId: 'doc-1', userId: 'rare-user' },
        byDoc('doc-1').filter((r) => r.actionUser.userId === 'rare-user'),
      ],
      [
        'target and featureTypes',
        { targetEntityId: 'target-b', featureTypes: ['comment'] },
        records.filter((r) => r.targetEntityId === 'target-b' && r.featureType === 'comment'),
      ],
      [
        'user, actionTypes and featureTypes',
        { userId: 'common-user', actionTypes: ['even.action'], featureTypes: ['custom', 'reaction'] },
        records.filter(
          (r) => r.actionUser.userId === 'common-user' && r.actionType === 'even.action' && r.featureType !== 'comment',
        ),
      ],
      [
        'document, target and user',
        { documentId: 'doc-1', targetEntityId: 'target-a', userId: 'common-user' },
        byDoc('doc-1').filter((r) => r.targetEntityId === 'target-a' && r.actionUser.userId === 'common-user'),
      ],
      [
        'activityIds',
        { activityIds: ['r03', 'r25', 'r11', 'missing'] },
        records.filter((r) => ['r03', 'r25', 'r11'].includes(r.id)),
      ],
      [
        'activityIds and documentId',
        { activityIds: ['r03', 'r25', 'r11'], documentId: 'doc-1' },
        records.filter((r) => ['r03', 'r11'].includes(r.id)),
      ],
    ])('filters by %s and pages through every match in both orders', async (_, filter, expected) => {
      expect(expected.length).toBeGreaterThan(0);

      const newest = await allPages(tenant, { organizationId, ...filter, pageSize: 2 });
      const oldest = await allPages(tenant, { organizationId, ...filter, pageSize: 2, order: 'asc' });

      expect(newest.all).toEqual(desc(expected));
      expect(oldest.all).toEqual(asc(expected));
      // A filtered page may be short (read budget, below), never longer than pageSize.
      expect(newest.pages.every((p) => p.length <= 2)).toBe(true);
      expect(newest.tokens[newest.tokens.length - 1]).toBe(false);
    });

    it.each([
      ['newest first', 'desc'],
      ['oldest first', 'asc'],
    ])(
      'stops a sparse filter after 5 × pageSize entries with a short page and a token that resumes after them (%s)',
      async (_, order) => {
        // 5 matches among the 30 records (r05, r11, r17, r23, r29), one in every 5 or 6: a page of 1 examines 5 records
        // a call, so some calls find nothing (the first one oldest first) and answer an empty page with a token.
        const filter = { organizationId, actionTypes: ['odd.action'], featureTypes: ['custom'], pageSize: 1, order };
        const expected = records.filter((r) => r.actionType === 'odd.action' && r.featureType === 'custom');

        const { pages, tokens, all } = await allPages(tenant, filter);

        expect(all).toEqual(order === 'asc' ? asc(expected) : desc(expected));
        // 30 records at 5 a call: 6 calls, and a 7th when the 6th stopped at its budget exactly at the end.
        expect(pages.length).toBeGreaterThanOrEqual(30 / 5);
        expect(pages.length).toBeLessThanOrEqual(30 / 5 + 1);
        expect(pages.filter((p) => p.length === 0).length).toBe(pages.length - expected.length);
        expect(tokens.slice(0, -1).every(Boolean)).toBe(true);
        expect(tokens[tokens.length - 1]).toBe(false);
      },
    );

    it('ends a page early, with a token, when its records would pass 2 MB', async () => {
      const organizationId2 = uniqueId('org');
      const big = (i: number) => comment(`big-${i}`, { entityData: 'x'.repeat(290 * 1024) });
      for (const batch of [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
      ]) {
        await add(tenant, { organizationId: organizationId2, activities: batch.map(big) });
      }
      const everyId = Array.from({ length: 9 }, (_, i) => `big-${i}`);

      const timeline = await allPages(tenant, { organizationId: organizationId2, order: 'asc' });
      const named = await allPages(tenant, { organizationId: organizationId2, activityIds: everyId, order: 'asc' });

      for (const result of [timeline, named]) {
        expect(result.pages.map((p) => p.length)).toEqual([7, 2]);
        expect(result.tokens).toEqual([true, false]);
        expect(result.all).toEqual(everyId);
      }
    });

    it('returns an empty list for an unknown organization', async () => {
      const response = await get(tenant, { organizationId: uniqueId('org') });

      expect(response.body.result?.data).toEqual([]);
      expect(response.body.result?.pageToken).toBeUndefined();
    });

    it('treats the filters as one query whatever the order of list values', async () => {
      const first = await get(tenant, { organizationId, featureTypes: ['comment', 'custom'], pageSize: 2 });

      const next = await get(tenant, {
        organizationId,
        featureTypes: ['custom', 'comment', 'custom'],
        pageSize: 2,
        pageToken: first.body.result?.pageToken,
      });

      expect(next.statusCode).toBe(200);
      expect(ids(next)).toHaveLength(2);
    });

    describe('page tokens', () => {
      let token: string;
      beforeAll(async () => {
        token = (await get(tenant, { organizationId, pageSize: 5 })).body.result?.pageToken as string;
      });

      it.each([
        ['a tampered token', () => ({ organizationId, pageSize: 5, pageToken: `${token.slice(0, -2)}xx` })],
        ['a token with an altered body', () => ({ organizationId, pageSize: 5, pageToken: `e30${token.slice(3)}` })],
        ['a token of another filter', () => ({ organizationId, documentId: 'doc-1', pageSize: 5, pageToken: token })],
        ['a token of another order', () => ({ organizationId, order: 'asc', pageSize: 5, pageToken: token })],
        ['a token of another organization', () => ({ organizationId: uniqueId('org'), pageSize: 5, pageToken: token })],
        ['garbage', () => ({ organizationId, pageToken: 'not-a-token' })],
      ])('answers INVALID_ARGUMENT for %s', async (_, data) => {
        const response = await get(tenant, data());

        expect(response.statusCode).toBe(400);
        expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
      });

      it('answers INVALID_ARGUMENT for a token issued to another API key of the same workspace', async () => {
        const sibling = await siblingKey(tenant);

        const response = await get(sibling, { organizationId, pageSize: 5, pageToken: token });

        expect(response.body.error).toEqual({
          status: 'INVALID_ARGUMENT',
          message: 'Page token does not belong to this query.',
        });
      });

      it('accepts its own token with another page size', async () => {
        const response = await get(tenant, { organizationId, pageSize: 3, pageToken: token });

        expect(ids(response)).toEqual(desc(records).slice(5, 8));
      });
    });

    it.each([
      ['a missing organizationId', {}, 'data.organizationId'],
      ['pageSize 0', { organizationId: 'o', pageSize: 0 }, 'data.pageSize'],
      ['pageSize 1001', { organizationId: 'o', pageSize: 1001 }, 'data.pageSize'],
      ['a fractional pageSize', { organizationId: 'o', pageSize: 1.5 }, 'data.pageSize'],
      ['an unknown order', { organizationId: 'o', order: 'newest' }, 'data.order'],
      ['an unknown featureType', { organizationId: 'o', featureTypes: ['poll'] }, 'data.featureTypes.0'],
      ['an empty featureTypes list', { organizationId: 'o', featureTypes: [] }, 'data.featureTypes'],
      [
        '101 activityIds',
        { organizationId: 'o', activityIds: Array.from({ length: 101 }, (_, i) => `a${i}`) },
        'data.activityIds',
      ],
      ['a numeric userId', { organizationId: 'o', userId: 5 }, 'data.userId'],
    ])('rejects %s with INVALID_ARGUMENT', async (_, data, path) => {
      const response = await get(tenant, data);

      expect(response.statusCode).toBe(400);
      expect(response.body.error?.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    });

    it('reads records after the log is disabled', async () => {
      const other = await enabledTenant();
      const organizationId2 = uniqueId('org');
      await add(other, { organizationId: organizationId2, activities: [comment('kept')] });
      await configure(other, { isEnabled: false });

      expect(ids(await get(other, { organizationId: organizationId2 }))).toEqual(['kept']);
    });
  });

  it('keeps ids, documents, targets and users with separators apart', async () => {
    const organizationId = 'org#with#hash';
    const long = (c: string) => c.repeat(200);
    const tricky = ['a#b', 'a', 'b', 'a%23b', '~x', 'a|b', 'ACT#a', long('é'), `${long('é')}x`];

    await add(tenant, {
      organizationId,
      documentId: 'd#1',
      activities: tricky.map((id) => comment(id, { targetEntityId: id, actionUser: { userId: id } })),
    });
    await sleep(3);
    await add(tenant, {
      organizationId,
      documentId: 'd',
      activities: [comment('plain', { targetEntityId: 'a#b', actionUser: { userId: 'a' } })],
    });
    await add(tenant, { organizationId: 'org', documentId: 'with#hash', activities: [comment('elsewhere')] });

    expect(ids(await get(tenant, { organizationId, documentId: 'd#1', order: 'asc' }))).toEqual(tricky);
    expect(ids(await get(tenant, { organizationId, documentId: 'd' }))).toEqual(['plain']);
    expect(ids(await get(tenant, { organizationId, targetEntityId: 'a#b' }))).toEqual(['plain', 'a#b']);
    expect(ids(await get(tenant, { organizationId, userId: 'a', order: 'asc' }))).toEqual(['a', 'plain']);
    expect(ids(await get(tenant, { organizationId, userId: long('é') }))).toEqual([long('é')]);
    expect(
      ids(await get(tenant, { organizationId, activityIds: ['a#b', 'a%23b', `${long('é')}x`], order: 'asc' })),
    ).toEqual(['a#b', 'a%23b', `${long('é')}x`]);
    expect(ids(await get(tenant, { organizationId: 'org' }))).toEqual(['elsewhere']);
  });

  describe('tenancy', () => {
    it('keeps another API key of the same workspace, and another workspace, from reading or overwriting records', async () => {
      const organizationId = uniqueId('org');
      const original = comment('shared-id', {
        entityData: { owner: 'first' },
        targetEntityId: 't',
        actionUser: { userId: 'u' },
      });
      await add(tenant, { organizationId, documentId: 'd', activities: [original] });
      const sibling = await siblingKey(tenant);
      await configure(sibling, { isEnabled: true, immutable: false });
      const stranger = await enabledTenant({ immutable: false });

      const writes = await Promise.all(
        [sibling, stranger].map((who) =>
          add(who, {
            organizationId,
            documentId: 'd',
            activities: [comment('shared-id', { entityData: { owner: 'other' } })],
          }),
        ),
      );

      expect(writes.map((w) => w.statusCode)).toEqual([200, 200]);
      for (const who of [sibling, stranger]) {
        const seen = await get(who, { organizationId, activityIds: ['shared-id'] });
        expect(seen.body.result?.data).toHaveLength(1);
        expect(seen.body.result?.data[0].entityData).toEqual({ owner: 'other' });
        expect(seen.body.result?.data[0].metadata.apiKey).not.toBe(tenant.apiKeyId);
        expect(ids(await get(who, { organizationId, targetEntityId: 't' }))).toEqual([]);
        expect(ids(await get(who, { organizationId, userId: 'u' }))).toEqual([]);
      }
      const mine = (await get(tenant, { organizationId, documentId: 'd' })).body.result?.data;
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ entityData: { owner: 'first' }, metadata: { apiKey: tenant.apiKeyId } });
    });

    it('checks each key against its own activity config', async () => {
      const sibling = await siblingKey(tenant);

      const response = await add(sibling, { organizationId: uniqueId('org'), activities: [comment('x')] });

      expect(response.body.error?.status).toBe('FAILED_PRECONDITION');
    });
  });
});
