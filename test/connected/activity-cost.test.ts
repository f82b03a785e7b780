/**
 * What activity records cost (issue 16, item 2; docs/architecture.md "Access patterns", docs/benchmarks.md "Cost per operation"): the capacity
 * of Add Activities for one realistic 1.5 KB record and of a page of 100 such records on each timeline, held here
 * so that a change to the item layout, its indexes or their projections that makes them dearer fails a test.
 *
 * Capacity is the service client's, metered (test/support/capacity-meter.ts). DynamoDB Local reports a flat 4 for a
 * transaction; the meter bills 2 WCU per KB of each item instead, and the index entries a transaction writes are
 * sized here from the item read back and the indexes' projections (1 WCU per KB of each entry), as DynamoDB bills.
 */
import { createHash } from 'node:crypto';
import { GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { handler as addActivities } from '../../functions/activities/add';
import { handler as getActivities } from '../../functions/activities/get';
import { handler as updateConfig } from '../../functions/workspace/activityconfig-update';
import { activityKey } from '../../shared/db/activity';
import { TABLE_NAME, dynamodb } from '../../shared/db/client';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY } from '../../shared/db/table-definition';
import { activityRecord } from '../support/activity-record';
import { CapacityMeter } from '../support/capacity-meter';
import { newTenant, type Tenant } from '../support/fixtures';
import { endpoint } from '../support/invoke';

const add = endpoint(addActivities, '/v2/activities/add');
const get = endpoint(getActivities, '/v2/activities/get');
const configure = endpoint(updateConfig, '/v2/workspace/activityconfig/update');
const meter = new CapacityMeter();

type Image = Record<string, AttributeValue>;

/** An item's size as DynamoDB counts it (names and values; the attribute types an activity item has). */
function bytesOf(item: Image): number {
  return Object.entries(item).reduce((sum, [name, value]) => {
    const digits = value.N?.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length ?? 0;
    const size =
      value.S !== undefined
        ? Buffer.byteLength(value.S)
        : value.B !== undefined
          ? value.B.byteLength
          : value.N !== undefined
            ? Math.ceil(Math.max(1, digits) / 2) + 1
            : 1;
    return sum + Buffer.byteLength(name) + size;
  }, 0);
}

/** WCU of the item's index entries when written: 1 per KB of each entry, sized by its index's projection. */
function indexUnits(item: Image): number {
  return GLOBAL_INDEXES.filter(
    (index) => item[index.partitionKey] !== undefined && item[index.sortKey] !== undefined,
  ).reduce((sum, index) => {
    const kept =
      index.include === undefined
        ? Object.keys(item)
        : [PARTITION_KEY, SORT_KEY, index.partitionKey, index.sortKey, ...index.include];
    const entry = Object.fromEntries(Object.entries(item).filter(([name]) => kept.includes(name)));
    return sum + Math.max(1, Math.ceil(bytesOf(entry) / 1024));
  }, 0);
}

let tenant: Tenant;
// Ids of the lengths the figures are for (the key prefix of tenant and organization is in every key, so longer
// ids make every entry longer): the tenant makes them unique. A record id looks like a generated one (32 hex
// digits, which compress as badly inside the content), yet is the same in every run: the entries' sizes then do
// not vary from run to run (a random id moved an entry across 1 KB in one run of ten).
const organizationId = 'acme';
const documentId = 'roadmap-2026';
let records = 0;
const recordId = () =>
  `act_${createHash('sha256')
    .update(`record-${(records += 1)}`)
    .digest('hex')
    .slice(0, 32)}`;

beforeAll(async () => {
  tenant = await newTenant();
  const enabled = await configure(tenant, { activityServiceConfig: { isEnabled: true } });
  if (enabled.statusCode !== 200) throw new Error(JSON.stringify(enabled.body));
  // 100 records of 1.5 KB on all four timelines (one organization, document, target and user).
  const seeded = await add(tenant, {
    organizationId,
    documentId,
    activities: Array.from({ length: 100 }, (_, i) => activityRecord(recordId(), 1536)),
  });
  if (seeded.statusCode !== 200) throw new Error(JSON.stringify(seeded.body));
  meter.attach(dynamodb);
});

afterAll(() => meter.detach());

describe('activity record costs', () => {
  it('bills at most 10 WCU for one 1.5 KB record on four timelines: a 2 KB item in the transaction, four 1 KB entries, the lock check', async () => {
    const record = activityRecord(recordId(), 1536);

    const { value, capacity } = await meter.measure(() =>
      add(tenant, { organizationId, documentId, activities: [record] }),
    );
    const stored = await dynamodb.send(
      new GetItemCommand({
        TableName: TABLE_NAME,
        Key: { pk: { S: activityKey(tenant.apiKeyId, organizationId, record.id).pk }, sk: { S: 'ACTIVITY' } },
      }),
    );
    const item = stored.Item ?? {};

    expect(value.statusCode).toBe(200);
    expect(bytesOf(item)).toBeLessThanOrEqual(2048);
    // The meter's transaction (2 × the item's KB + 2 for the lock check) plus the entries, one per timeline.
    expect(capacity.write).toBe(6);
    expect(indexUnits(item)).toBe(4);
    expect(capacity.write + indexUnits(item)).toBeLessThanOrEqual(10);
  });

  it.each([
    ['organization', {}],
    ['document', { documentId }],
    ['target entity', { targetEntityId: 'annotation-000001' }],
    ['acting user', { userId: 'user-00001' }],
  ])(
    "reads a page of 100 records of 1.5 KB from the %s's timeline in one Query of at most 13 RCU",
    async (_timeline, filter) => {
      // Warm: the first call of a process also reads the page-token key and the credentials.
      await get(tenant, { organizationId, pageSize: 1, ...filter });

      const { value, capacity } = await meter.measure(() => get(tenant, { organizationId, pageSize: 100, ...filter }));

      expect(value.statusCode).toBe(200);
      expect(value.body.result?.data).toHaveLength(100);
      expect(capacity.calls).toBe(1);
      expect(capacity.read).toBeLessThanOrEqual(13);
    },
  );
});
