/**
 * Issue 16, item 2: the activity item layouts weighed against each other, so the choice in shared/db/activity.ts
 * rests on measured figures rather than arithmetic alone. Each layout gets a table of its own on DynamoDB Local
 * (its four timeline indexes as it would define them) and the same records: 101 realistic 1.5 KB records on all
 * four timelines (organization, document, target entity, acting user) and one on the organization's and the
 * document's only. Per layout:
 *
 * - WCU of Add Activities for one record: what DynamoDB Local reports for a PutItem of the item, per table and per
 *   index (ReturnConsumedCapacity INDEXES), billed as the service writes it, in a transaction: 2 × the table's
 *   units + each index entry's + 2 for the document's lock check (DynamoDB Local reports a flat 4 for any
 *   transaction, so its parts are measured one by one). In a batch of 100 the lock check has no room: subtract 2.
 * - RCU of a page of 100 on each timeline, newest first, as the service reads it (a Query of 101 entries; where the
 *   index holds keys only, then a BatchGet of the 100 records, eventually consistent).
 * - WCU of moving one record to another document (document migration: a Put of the rebuilt item, no transaction).
 */
import {
  BatchGetItemCommand,
  CreateTableCommand,
  PutItemCommand,
  QueryCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { createHash } from 'node:crypto';
import { key, segment, sortableNumber } from '../shared/db/keys';
import { activityRecord } from '../test/support/activity-record';
import { startBenchStack } from './harness';

/** The service's content encoding, loaded once the stack has set the environment its modules read. */
let encodeContent: (content: never) => { content: Uint8Array; size: number };

type Projection = 'ALL' | 'SLIM' | 'KEYS';
const TIMELINES = ['organization', 'document', 'target', 'user'] as const;
type Timeline = (typeof TIMELINES)[number];

interface Layout {
  name: string;
  /** Content as brotli (the service's encodeContent) or as one JSON string. */
  compressed: boolean;
  /** What each timeline's index projects: everything, what a page needs (SLIM), or the keys and filter attributes. */
  projections: Record<Timeline, Projection>;
  /** One position attribute for the four indexes, or one sort key per index. */
  sharedPosition: boolean;
  /** The copies the first layout stored: the content hash, the target entity, the timestamp in timeline entries. */
  copies: boolean;
}

const all = (projection: Projection): Record<Timeline, Projection> => ({
  organization: projection,
  document: projection,
  target: projection,
  user: projection,
});

const LAYOUTS: Layout[] = [
  {
    name: 'before: JSON string, 4 ALL indexes',
    compressed: false,
    projections: all('ALL'),
    sharedPosition: false,
    copies: true,
  },
  {
    name: '(a) slim: JSON string, 4 slim INCLUDE indexes, one position',
    compressed: false,
    projections: all('SLIM'),
    sharedPosition: true,
    copies: false,
  },
  {
    name: '(b) compressed, 4 ALL indexes',
    compressed: true,
    projections: all('ALL'),
    sharedPosition: false,
    copies: false,
  },
  {
    name: '(c) compressed, org + doc slim, target + user keys',
    compressed: true,
    projections: { organization: 'SLIM', document: 'SLIM', target: 'KEYS', user: 'KEYS' },
    sharedPosition: true,
    copies: false,
  },
  {
    name: '(d) compressed, 4 keys-only indexes',
    compressed: true,
    projections: all('KEYS'),
    sharedPosition: true,
    copies: false,
  },
  {
    name: 'chosen: compressed, 4 slim INCLUDE indexes, one position',
    compressed: true,
    projections: all('SLIM'),
    sharedPosition: true,
    copies: false,
  },
];

const FILTERS = ['documentId', 'featureType', 'actionType', 'userId'];
const PAGE_FIELDS = ['content', 'size', ...FILTERS];

const pkOf = (timeline: Timeline) => `${timeline}pk`;
const skOf = (layout: Layout, timeline: Timeline) => (layout.sharedPosition ? 'position' : `${timeline}sk`);

function tableInput(layout: Layout, tableName: string) {
  const keys = [...new Set(['pk', 'sk', ...TIMELINES.flatMap((t) => [pkOf(t), skOf(layout, t)])])];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: keys.map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' as const },
      { AttributeName: 'sk', KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: TIMELINES.map((timeline) => {
      const projection = layout.projections[timeline];
      const included =
        projection === 'SLIM' ? [...PAGE_FIELDS, ...(layout.copies ? ['contentHash', 'timestamp'] : [])] : FILTERS;
      return {
        IndexName: timeline,
        KeySchema: [
          { AttributeName: pkOf(timeline), KeyType: 'HASH' as const },
          { AttributeName: skOf(layout, timeline), KeyType: 'RANGE' as const },
        ],
        Projection:
          projection === 'ALL'
            ? { ProjectionType: 'ALL' as const }
            : { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: included },
      };
    }),
  };
}

type Content = ReturnType<typeof activityRecord>;
const ORG = key('T', segment('k_0123456789abcdef01'), 'ORG', segment('acme'));
const partitionOf = (timeline: Timeline, content: Content, documentId: string): string | undefined => {
  if (timeline === 'organization') return key(ORG, 'ACTS');
  if (timeline === 'document') return key(ORG, 'ACTS', 'DOC', segment(documentId));
  if (timeline === 'target')
    return content.targetEntityId === undefined
      ? undefined
      : key(ORG, 'ACTS', 'TARGET', segment(content.targetEntityId));
  return content.actionUser === undefined ? undefined : key(ORG, 'ACTS', 'USER', segment(content.actionUser.userId));
};

/** The item a layout stores for a record (the service's own, shared/db/activity.ts, is the chosen layout's). */
function itemOf(
  layout: Layout,
  content: Content,
  documentId: string,
  timestamp: number,
  seq: number,
): Record<string, unknown> {
  const position = key(sortableNumber(timestamp), sortableNumber(seq, 3), segment(content.id));
  const json = JSON.stringify(content);
  const item: Record<string, unknown> = {
    pk: key(ORG, 'ACT', segment(content.id)),
    sk: 'ACTIVITY',
    organizationId: 'acme',
    documentId,
    featureType: content.featureType,
    actionType: content.actionType,
    userId: content.actionUser?.userId,
    timestamp,
    ...(layout.compressed
      ? encodeContent(content as never)
      : { content: json, ...(layout.copies ? {} : { size: json.length }) }),
    ...(layout.copies
      ? {
          targetEntityId: content.targetEntityId,
          contentHash: createHash('sha256')
            .update(documentId + json)
            .digest('base64url'),
        }
      : {}),
  };
  for (const timeline of TIMELINES) {
    const partition = partitionOf(timeline, content, documentId);
    if (partition === undefined) continue;
    item[pkOf(timeline)] = partition;
    item[skOf(layout, timeline)] = position;
  }
  return item;
}

interface Figures {
  layout: string;
  itemBytes: number;
  addFour: number;
  addOrgDoc: number;
  pages: Record<Timeline, number>;
  move: number;
}

/**
 * A PutItem's units as DynamoDB Local reports them: the item's and each index entry's (one per index it joins; two
 * where an index key changed, the old entry deleted and the new one put), in one total.
 */
async function put(client: DynamoDBClient, tableName: string, item: Record<string, unknown>): Promise<number> {
  const result = await client.send(
    new PutItemCommand({
      TableName: tableName,
      Item: marshall(item, { removeUndefinedValues: true }),
      ReturnConsumedCapacity: 'TOTAL',
    }),
  );
  return result.ConsumedCapacity?.CapacityUnits ?? 0;
}

/**
 * Billed as Add Activities writes one record: the Put's units with the item counted twice (a transaction bills 2 WCU
 * per KB of the item; DynamoDB Local reports a flat 4 for a transaction, so the item's share is added from its
 * size), and 2 for the lock check.
 */
const transactionUnits = (putUnits: number, item: Record<string, unknown>) =>
  putUnits + Math.max(1, Math.ceil(itemSize(item) / 1024)) + 2;

function itemSize(item: Record<string, unknown>): number {
  const marshalled: Record<string, AttributeValue> = marshall(item, { removeUndefinedValues: true });
  return Object.entries(marshalled).reduce((sum, [name, value]) => {
    const bytes =
      value.S !== undefined
        ? Buffer.byteLength(value.S)
        : value.B !== undefined
          ? value.B.byteLength
          : value.N !== undefined
            ? Math.ceil(value.N.length / 2) + 1
            : 1;
    return sum + Buffer.byteLength(name) + bytes;
  }, 0);
}

async function measureLayout(client: DynamoDBClient, layout: Layout, index: number): Promise<Figures> {
  const tableName = `activity-layout-${index}-${Date.now()}`;
  await client.send(new CreateTableCommand(tableInput(layout, tableName)));
  const records = Array.from({ length: 101 }, (_, n) =>
    activityRecord(`act_${String(n).padStart(4, '0')}${'0'.repeat(28)}`, 1536),
  );
  const start = 1_712_345_678_901;
  const writes: number[] = [];
  for (const [n, content] of records.entries()) {
    const item = itemOf(layout, content, 'roadmap-2026', start + n, 0);
    writes.push(transactionUnits(await put(client, tableName, item), item));
  }
  const orgDoc = activityRecord(`act_orgdoc${'0'.repeat(26)}`, 1536, { user: false, target: false });
  const orgDocItem = itemOf(layout, orgDoc, 'roadmap-2026', start + 200, 0);
  const addOrgDoc = transactionUnits(await put(client, tableName, orgDocItem), orgDocItem);

  const pages = {} as Record<Timeline, number>;
  const sample = records[0];
  for (const timeline of TIMELINES) {
    const query = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: timeline,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': pkOf(timeline) },
        ExpressionAttributeValues: { ':pk': { S: String(partitionOf(timeline, sample, 'roadmap-2026')) } },
        ScanIndexForward: false,
        Limit: 101,
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    let read = query.ConsumedCapacity?.CapacityUnits ?? 0;
    if (layout.projections[timeline] === 'KEYS') {
      const keys = (query.Items ?? []).slice(0, 100).map((entry) => ({ pk: entry.pk, sk: entry.sk }));
      const got = await client.send(
        new BatchGetItemCommand({ RequestItems: { [tableName]: { Keys: keys } }, ReturnConsumedCapacity: 'TOTAL' }),
      );
      read += (got.ConsumedCapacity ?? []).reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
    }
    pages[timeline] = read;
  }

  const move = await put(client, tableName, itemOf(layout, records[50], 'roadmap-2027', start + 50, 0));
  return {
    layout: layout.name,
    itemBytes: itemSize(itemOf(layout, records[0], 'roadmap-2026', start, 0)),
    addFour: writes.sort((a, b) => a - b)[Math.floor(writes.length / 2)],
    addOrgDoc,
    pages,
    move,
  };
}

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { dynamodb } = await import('../shared/db/client');
    ({ encodeContent } = await import('../shared/db/activity'));
    const rows: Figures[] = [];
    for (const [index, layout] of LAYOUTS.entries()) rows.push(await measureLayout(dynamodb, layout, index));

    const sample = activityRecord('act_sample', 1536);
    const json = JSON.stringify(sample);
    const compressed = encodeContent(sample as never).content.byteLength;
    console.log(
      `\nActivity item layouts: one 1.5 KB record (${json.length} B of JSON; brotli ${compressed} B, ${(json.length / compressed).toFixed(2)}×), DynamoDB Local's units.`,
    );
    console.log(
      'Add: one record in a transaction with the lock check (a batch of 100 has no check: 2 less per record). Page: 100 records, newest first.\n',
    );
    console.log(
      '| layout | item B | add, 4 timelines | add, org + doc | page org | page doc | page target | page user | move to another document |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const row of rows) {
      const pages = TIMELINES.map((timeline) => row.pages[timeline].toFixed(1)).join(' | ');
      console.log(`| ${row.layout} | ${row.itemBytes} | ${row.addFour} | ${row.addOrgDoc} | ${pages} | ${row.move} |`);
    }
  } finally {
    await bench.stack.stop();
  }
}
