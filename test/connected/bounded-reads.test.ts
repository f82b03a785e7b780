/**
 * Bounded reads (docs/project-decisions.md): a listing whose query filters entries after reading them examines at most
 * 5 × pageSize entries per call, so a filter that matches nothing costs the same on every page however long the
 * log, and its page tokens resume after the last entry examined, so paging to the end returns every match once.
 *
 * The logs are seeded by writing the stored items directly (BatchWrite of the items the db modules build), not
 * through the add operations: 10,000 HTTP-shaped calls would take minutes. The logs are sized to what is proved: the
 * budget scales with the page size, so what matters is the log's length in budgets (100 calls to page through it),
 * not in records; a page of 20 over 10,000 records proves what a page of 100 over 50,000 did, for a fifth of the
 * seeding. Capacity is measured on the service's
 * own DynamoDB client (test/support/capacity-meter.ts); DynamoDB Local reports ConsumedCapacity like DynamoDB.
 */
import { handler as getActivities } from '../../functions/activities/get';
import { handler as deleteNotifications } from '../../functions/notifications/delete';
import { handler as getNotifications } from '../../functions/notifications/get';
import { activityItem, type ActivityContent } from '../../shared/db/activity';
import { batchWrite, putRequest, type Item } from '../../shared/db/batch';
import { dynamodb } from '../../shared/db/client';
import { feedEntryItem, notificationItem, type NotificationRecord } from '../../shared/db/notification';
import { CapacityMeter } from '../support/capacity-meter';
import { newTenant, type Tenant } from '../support/fixtures';
import { invoke, type Invocation } from '../support/invoke';

const meter = new CapacityMeter();
let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
});

afterAll(() => meter.detach());

/**
 * Writes items 2,500 at a time (100 BatchWrites in parallel). The file's table has no stream (it reads none:
 * test/support/connected-environment.ts), so the seeding leaves no stream records to slow later writes.
 */
async function seed(items: Item[]): Promise<void> {
  for (let i = 0; i < items.length; i += 2500) await batchWrite(items.slice(i, i + 2500).map(putRequest));
  // Metered from here on: the seeding's writes need no capacity report.
  meter.attach(dynamodb);
}

interface PageCall {
  ids: string[];
  token?: string;
  read: number;
}

/** Every page of a listing, following its tokens: each page's ids, token and read capacity. */
async function pageThrough(call: (pageToken?: string) => Promise<Invocation>, maxCalls: number): Promise<PageCall[]> {
  const calls: PageCall[] = [];
  let pageToken: string | undefined;
  do {
    const { value, capacity } = await meter.measure(() => call(pageToken));
    if (value.statusCode !== 200) throw new Error(JSON.stringify(value.body));
    pageToken = value.body.result?.pageToken;
    calls.push({
      ids: (value.body.result?.data as Array<{ id: string }>).map((entry) => entry.id),
      token: pageToken,
      read: capacity.read,
    });
  } while (pageToken !== undefined && calls.length < maxCalls);
  return calls;
}

/** A read capacity within 5 % (and at least half a unit) of `reference`. */
const near = (reference: number) => (read: number) => Math.abs(read - reference) <= Math.max(0.5, reference * 0.05);

describe('Get Activities with a filter over a log of 10,000 records', () => {
  const organizationId = 'org-long-log';
  const RECORDS = 10_000;
  const PAGE_SIZE = 20;
  // The records that match the rare filter: single ones scattered from the first to the last few, and a run of 30
  // in the middle, longer than a page, so a page also ends inside the matches.
  const scattered = [3, 842, 1_999, 3_000, 4_374, 5_200, 6_283, 7_777, 8_888, 9_998];
  const run = Array.from({ length: 30 }, (_, i) => 4_800 + i);
  const rare = new Set([...scattered, ...run]);
  const id = (n: number) => `act-${String(n).padStart(5, '0')}`;
  const get = (filter: Record<string, unknown>) => (pageToken?: string) =>
    invoke(
      getActivities,
      '/v2/activities/get',
      { organizationId, pageSize: PAGE_SIZE, ...filter, ...(pageToken ? { pageToken } : {}) },
      { headers: tenant.apiKeyHeaders },
    );

  beforeAll(async () => {
    // Record n is the n-th written: 1,000 per millisecond, in order, so the log's order is the order of n.
    const start = Date.now() - 60_000;
    const items = Array.from({ length: RECORDS }, (_, n) => {
      const content: ActivityContent = {
        id: id(n),
        featureType: 'comment',
        actionType: rare.has(n) ? 'comment.rare' : 'comment.update',
      };
      return activityItem(tenant.apiKeyId, {
        organizationId,
        content,
        timestamp: start + Math.floor(n / 1000),
        seq: n % 1000,
      });
    });
    await seed(items);
  });

  it('reads the same capacity for page 1, a middle page and a late page of a filter that matches nothing, far below the log', async () => {
    // The first call of a process also reads the page-token key and the credentials: measure warm calls.
    await get({ actionTypes: ['never.sent'] })();

    const calls = await pageThrough(get({ actionTypes: ['never.sent'] }), 200);

    // Each call examines 5 × pageSize entries: the log takes 100 calls (one more when the end falls on a budget).
    expect(calls.length).toBeGreaterThanOrEqual(RECORDS / (5 * PAGE_SIZE));
    expect(calls.length).toBeLessThanOrEqual(RECORDS / (5 * PAGE_SIZE) + 1);
    expect(calls.every((call) => call.ids.length === 0)).toBe(true);
    expect(calls.slice(0, -1).every((call) => call.token !== undefined)).toBe(true);
    expect(calls[calls.length - 1].token).toBeUndefined();
    const [first, middle, late] = [calls[0], calls[Math.floor(calls.length / 2)], calls[calls.length - 3]].map(
      (call) => call.read,
    );
    expect(first).toBeGreaterThan(0);
    expect([middle, late].every(near(first))).toBe(true);
    // Paging to the end read the whole log once; one call reads a hundredth of it.
    const wholeLog = calls.reduce((sum, call) => sum + call.read, 0);
    expect(Math.max(first, middle, late)).toBeLessThan(wholeLog / 50);
  });

  it('pages through a filter matching scattered records and returns exactly them, each once', async () => {
    const calls = await pageThrough(get({ actionTypes: ['comment.rare'] }), 200);

    const newestFirst = [...rare].sort((a, b) => b - a).map(id);
    expect(calls.flatMap((call) => call.ids)).toEqual(newestFirst);
    // Short and empty pages carry a token; pages are never over pageSize, and the run of 30 fills one.
    expect(calls.some((call) => call.ids.length === 0 && call.token !== undefined)).toBe(true);
    expect(Math.max(...calls.map((call) => call.ids.length))).toBe(PAGE_SIZE);
    expect(calls[calls.length - 1].token).toBeUndefined();
  });
});

describe('Get and Delete Notifications with a locationId filter over 3,000 notifications', () => {
  const organizationId = 'org-many-notifications';
  const NOTIFICATIONS = 3_000;
  const PAGE_SIZE = 20;
  // Rare location: every 250th notification, and a run of 30 (longer than a page).
  const rare = new Set([
    ...Array.from({ length: NOTIFICATIONS }, (_, n) => n).filter((n) => n % 250 === 7),
    ...Array.from({ length: 30 }, (_, i) => 1_500 + i),
  ]);
  const id = (n: number) => `ntf-${String(n).padStart(4, '0')}`;
  const get = (filter: Record<string, unknown>) => (pageToken?: string) =>
    invoke(
      getNotifications,
      '/v2/notifications/get',
      { organizationId, pageSize: PAGE_SIZE, ...filter, ...(pageToken ? { pageToken } : {}) },
      { headers: tenant.apiKeyHeaders },
    );

  beforeAll(async () => {
    // One notification per millisecond, each delivered to one reader: the organization's, the document's and the
    // reader's timelines all hold the 3,000 in the same order.
    const start = Date.now() - 60_000;
    const notifications: Array<Omit<NotificationRecord, 'readByUserIds'>> = Array.from(
      { length: NOTIFICATIONS },
      (_, n) => ({
        id: id(n),
        organizationId,
        documentId: 'doc',
        locationId: rare.has(n) ? 'rare' : 'common',
        actionUser: { userId: 'actor' },
        displayHeadlineMessageTemplate: 'Notification {{n}}',
        notifyUsers: [{ userId: 'reader' }],
        notifyAll: false,
        timestamp: start + n,
      }),
    );
    await seed(
      notifications.flatMap((n) => [notificationItem(tenant.apiKeyId, n), feedEntryItem(tenant.apiKeyId, n, 'reader')]),
    );
  });

  it('reads the same capacity for page 1, a middle page and a late page of a location that matches nothing', async () => {
    await get({ locationId: 'nowhere' })();

    const calls = await pageThrough(get({ locationId: 'nowhere' }), 100);

    expect(calls.length).toBeGreaterThanOrEqual(NOTIFICATIONS / (5 * PAGE_SIZE));
    expect(calls.length).toBeLessThanOrEqual(NOTIFICATIONS / (5 * PAGE_SIZE) + 1);
    expect(calls.every((call) => call.ids.length === 0)).toBe(true);
    expect(calls[calls.length - 1].token).toBeUndefined();
    const [first, middle, late] = [calls[0], calls[Math.floor(calls.length / 2)], calls[calls.length - 3]].map(
      (call) => call.read,
    );
    expect(first).toBeGreaterThan(0);
    expect([middle, late].every(near(first))).toBe(true);
    expect(Math.max(first, middle, late)).toBeLessThan(calls.reduce((sum, call) => sum + call.read, 0) / 10);
  });

  it.each([
    ['the organization timeline', {}],
    ['the document timeline', { documentId: 'doc' }],
    ["the reader's feed", { userId: 'reader' }],
    ["the reader's feed narrowed to the document", { userId: 'reader', documentId: 'doc' }],
  ])('pages through %s with the rare location and returns exactly its notifications, each once', async (_, filter) => {
    const calls = await pageThrough(get({ ...filter, locationId: 'rare', order: 'asc' }), 100);

    expect(calls.flatMap((call) => call.ids)).toEqual([...rare].sort((a, b) => a - b).map(id));
    expect(calls.some((call) => call.ids.length < PAGE_SIZE && call.token !== undefined)).toBe(true);
    expect(calls[calls.length - 1].token).toBeUndefined();
  });

  // Last in this block: it deletes the rare notifications the tests above read.
  it('deletes every notification of the location across the whole timeline', async () => {
    const response = await invoke(
      deleteNotifications,
      '/v2/notifications/delete',
      { organizationId, locationId: 'rare' },
      { headers: tenant.apiKeyHeaders },
    );

    expect(response.statusCode).toBe(200);
    expect(Object.keys(response.body.result?.data ?? {}).sort()).toEqual([...rare].sort((a, b) => a - b).map(id));
    const left = await pageThrough(get({ locationId: 'rare' }), 100);
    expect(left.flatMap((call) => call.ids)).toEqual([]);
    const kept = await pageThrough(get({ pageSize: 1000 }), 10);
    expect(kept.flatMap((call) => call.ids)).toHaveLength(NOTIFICATIONS - rare.size);
  });
});
