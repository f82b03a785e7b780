/**
 * Issue 16, item 1: what each operation costs against what it must cost. For every operation of the route table,
 * one representative request over HTTP on the local stack, its consumed RCU and WCU (the request only: the
 * workers that the table's stream wakes afterwards are not counted, and the bench waits for them to go quiet
 * before the next request), beside its floor, and the ratio.
 *
 * The floor is a small model, the same for every operation:
 * - reads: what the operation must read to answer, sized by DynamoDB's rules from what it returns (the returned
 *   objects as items, without keys: a lower bound), plus the few items it must check (a configuration, a
 *   credential). Items fetched one by one round up to 4 KB each; a listing is one Query, rounded up to 4 KB over
 *   its summed bytes. Activity records are stored compressed (shared/db/activity.ts), so a page of them is sized
 *   with each record's content as the service compresses it (the returned JSON would put the floor above what the
 *   stored form must cost). Eventually consistent (0.5) wherever a slightly stale answer is correct; strongly
 *   consistent (1) where the case says why.
 * - writes: the items the operation writes in the table itself (the data model taken as given), each read back
 *   after the request and rounded up to 1 KB (a deleted item counts 1 KB). ×2 only where several items must
 *   change all-or-nothing (the case says why). Index copies are never in the floor: they are the overhead the
 *   table measures.
 *
 * Consumed capacity is the capacity meter's (test/support/capacity-meter.ts), with one correction: DynamoDB Local
 * reports a flat 4 units for a TransactWriteItems, which the meter replaces by 2 WCU per item per KB; this bench
 * also adds what DynamoDB bills a transaction's index copies (1 WCU per KB of each index entry the written item
 * has), and sizes updated items as read back after the request rather than as 1 KB.
 */
import { GetItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY } from '../shared/db/table-definition';
import { routes } from '../shared/routes';
import { transactionWriteUnits } from '../test/support/capacity-meter';
import { FakeAiProviders, fakeBaseUrlEnvironment } from '../test/support/fake-ai-providers';
import { startReceiver, type Receiver } from '../test/support/webhook-receiver';
import { activityRecord } from '../test/support/activity-record';
import { startBenchStack, type BenchStack } from './harness';

type Item = Record<string, AttributeValue>;

/** Operations without a cost row, each with the reason. Empty: every route is measured. */
const LEFT_OUT: Readonly<Record<string, string>> = {};

const EVENTUAL = 0.5;
const STRONG = 1;

// ---------------------------------------------------------------------------------------------------------------
// DynamoDB's size rules

function numberBytes(n: string): number {
  const digits = n.replace(/^[-+]/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(1, digits.length) / 2) + 1;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberBytes(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
  if (value.M !== undefined)
    return (
      3 +
      Object.entries(value.M).reduce(
        (sum, [name, element]) => sum + 1 + Buffer.byteLength(name) + valueBytes(element),
        0,
      )
    );
  return 0;
}

/** An item's size as DynamoDB counts it: attribute names and values. */
function itemBytes(item: Item): number {
  return Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value), 0);
}

/** A returned object's size as an item (a non-object value as one attribute). */
function objectBytes(value: unknown): number {
  const object = value !== null && typeof value === 'object' && !Array.isArray(value) ? value : { value };
  return itemBytes(marshall(object, { removeUndefinedValues: true, convertClassInstanceToMap: true }));
}

/** Items read one by one (GetItem, BatchGetItem): each rounded up to 4 KB. */
const itemReads = (sizes: readonly number[], consistency: number) =>
  sizes.reduce((sum, bytes) => sum + Math.max(1, Math.ceil(bytes / 4096)) * consistency, 0);
/** One Query: 4 KB over the summed bytes, at least one unit. */
const queryRead = (sizes: readonly number[], consistency: number) =>
  Math.max(1, Math.ceil(sizes.reduce((sum, bytes) => sum + bytes, 0) / 4096)) * consistency;

// ---------------------------------------------------------------------------------------------------------------
// What a request writes, seen from the service's DynamoDB client

interface TransactItem {
  Put?: { Item?: Item };
  Update?: { Key?: Item };
  Delete?: { Key?: Item };
  ConditionCheck?: { Key?: Item };
}

interface WriteInput {
  Item?: Item;
  Key?: Item;
  RequestItems?: Record<string, Array<{ PutRequest?: { Item?: Item }; DeleteRequest?: { Key?: Item } }>>;
  TransactItems?: TransactItem[];
}

interface Written {
  key: Item;
  deleted: boolean;
}

class WriteRecorder {
  lastCommandAt = Date.now();
  private recording = false;
  private written = new Map<string, Written>();
  private transactions: TransactItem[][] = [];
  /** What the capacity meter counted for the transactions, from the input as it saw it (before marshalling). */
  private meterEstimate = 0;

  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        this.lastCommandAt = Date.now();
        if (this.recording && context.commandName === 'TransactWriteItemsCommand')
          this.meterEstimate += transactionWriteUnits(args.input);
        return next(args);
      },
      { step: 'initialize', name: 'costBenchMeterEstimate' },
    );
    // After the document client marshalled the input: keys and items as AttributeValues.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (this.recording) this.note(context.commandName ?? '', args.input as WriteInput);
        return next(args);
      },
      { step: 'build', name: 'costBenchWrites' },
    );
  }

  start(): void {
    this.recording = true;
    this.written = new Map();
    this.transactions = [];
    this.meterEstimate = 0;
  }

  stop(): { written: Written[]; transactions: TransactItem[][]; meterEstimate: number } {
    this.recording = false;
    return { written: [...this.written.values()], transactions: this.transactions, meterEstimate: this.meterEstimate };
  }

  /** Resolves once the client has sent nothing for `ms` (the stream's workers done with earlier requests). */
  async quiet(ms = 600): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (Date.now() - this.lastCommandAt < ms && Date.now() < deadline) await sleep(50);
  }

  private note(command: string, input: WriteInput): void {
    const mark = (item: Item | undefined, deleted: boolean) => {
      if (item === undefined) return;
      const key: Item = { [PARTITION_KEY]: item[PARTITION_KEY], [SORT_KEY]: item[SORT_KEY] };
      this.written.set(keyId(key), { key, deleted });
    };
    if (command === 'PutItemCommand') mark(input.Item, false);
    if (command === 'UpdateItemCommand') mark(input.Key, false);
    if (command === 'DeleteItemCommand') mark(input.Key, true);
    if (command === 'BatchWriteItemCommand') {
      for (const requests of Object.values(input.RequestItems ?? {})) {
        for (const request of requests) {
          mark(request.PutRequest?.Item, false);
          mark(request.DeleteRequest?.Key, true);
        }
      }
    }
    if (command === 'TransactWriteItemsCommand') {
      const items = input.TransactItems ?? [];
      this.transactions.push(items);
      for (const item of items) {
        mark(item.Put?.Item, false);
        mark(item.Update?.Key, false);
        mark(item.Delete?.Key, true);
      }
    }
  }
}

const keyId = (key: Item) => `${key[PARTITION_KEY]?.S ?? ''}\u0000${key[SORT_KEY]?.S ?? ''}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The size of an item's entry in an index it is in (projection ALL: the item; INCLUDE: keys and those attributes). */
function indexEntries(item: Item): number[] {
  return GLOBAL_INDEXES.filter(
    (index) => item[index.partitionKey] !== undefined && item[index.sortKey] !== undefined,
  ).map((index) => {
    if (index.include === undefined) return itemBytes(item);
    const kept = [PARTITION_KEY, SORT_KEY, index.partitionKey, index.sortKey, ...index.include];
    return itemBytes(Object.fromEntries(Object.entries(item).filter(([name]) => kept.includes(name))));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The cases

interface Case {
  path: string;
  /** The representative request, in a few words. */
  what: string;
  data: Record<string, unknown>;
  headers: Record<string, string>;
  /** The read floor in RCU, from the answer's `result`. */
  readFloor: (result: unknown) => number;
  /** Why the written items must change all-or-nothing (their floor then counts 2 WCU per KB); omitted: they need not. */
  atomic?: string;
}

interface Row {
  path: string;
  what: string;
  rcu: number;
  rcuFloor: number;
  wcu: number;
  wcuFloor: number;
}

/** `result.data` of an answer, or the answer's `result` when it has none. */
function dataOf(result: unknown): unknown {
  if (result !== null && typeof result === 'object' && 'data' in result) return result.data;
  return result;
}

/** The objects of a listing's `data` (an array, or an object keyed by id). */
function listed(result: unknown): unknown[] {
  const data = dataOf(result);
  if (Array.isArray(data)) return data;
  if (data !== null && typeof data === 'object') return Object.values(data);
  return [];
}

const sizes = (values: readonly unknown[]) => values.map(objectBytes);
/** A listing: one eventually consistent Query over what it returns. */
const page =
  (extra = 0) =>
  (result: unknown) =>
    queryRead(sizes(listed(result)), EVENTUAL) + extra;
/**
 * A listing of activity records, which are stored compressed (shared/db/activity.ts): each record's content as the
 * service compresses it, plus its metadata and timestamp as attributes. The returned JSON would overstate the floor.
 */
const compressedPage = (encode: (content: never) => { content: Uint8Array }) => (result: unknown) =>
  queryRead(
    listed(result).map((record) => {
      const { metadata, timestamp, ...content } = record as Record<string, unknown>;
      return encode(content as never).content.byteLength + objectBytes({ metadata, timestamp });
    }),
    EVENTUAL,
  );
/** Items fetched by id: each one eventually consistent read. */
const byId =
  (extra = 0) =>
  (result: unknown) =>
    itemReads(sizes(listed(result)), EVENTUAL) + extra;
/** One object (a configuration, a status): one eventually consistent GetItem. */
const one =
  (consistency = EVENTUAL) =>
  (result: unknown) =>
    itemReads([objectBytes(dataOf(result))], consistency);
/** A fixed number of small items that must be checked. */
const checks =
  (count: number, consistency = EVENTUAL) =>
  () =>
    count * consistency;

const valueAt = (value: unknown, ...path: Array<string | number>): unknown =>
  path.reduce<unknown>(
    (node, key) =>
      node !== null && typeof node === 'object'
        ? Object.entries(node).find(([name]) => name === String(key))?.[1]
        : undefined,
    value,
  );

function stringAt(value: unknown, ...path: Array<string | number>): string {
  const found = valueAt(value, ...path);
  if (typeof found !== 'string') throw new Error(`No string at ${path.join('.')} in ${JSON.stringify(value)}`);
  return found;
}

export async function run(): Promise<void> {
  const fake = await FakeAiProviders.start();
  // Before the stack starts: the handlers read their settings once, when they load.
  Object.assign(process.env, fakeBaseUrlEnvironment(fake.url));
  const bench = await startBenchStack();
  const { dynamodb } = await import('../shared/db/client');
  const recorder = new WriteRecorder();
  recorder.attach(dynamodb);
  const receivers: Receiver[] = [];
  try {
    const { rows, targets, notes } = await measureAll(bench, dynamodb, recorder, receivers);
    print(rows);
    printTargets(targets, notes);
  } finally {
    for (const receiver of receivers) await receiver.close();
    await bench.stack.stop();
    await fake.stop();
  }
}

/** A figure issue 16 sets a goal for, beside it. */
interface Target {
  goal: string;
  target: string;
  measured: number;
  met: boolean;
}

async function measureAll(
  bench: BenchStack,
  dynamodb: DynamoDBClient,
  recorder: WriteRecorder,
  receivers: Receiver[],
): Promise<{ rows: Row[]; targets: Target[]; notes: string[] }> {
  const rows: Row[] = [];
  const targets: Target[] = [];
  const notes: string[] = [];
  const ok = async (path: string, data: Record<string, unknown>, headers: Record<string, string>): Promise<unknown> => {
    const response = await bench.post(path, data, headers);
    const body: unknown = response.body;
    if (response.status !== 200) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(body)}`);
    return body;
  };

  const readBack = async (key: Item): Promise<Item | undefined> =>
    (await dynamodb.send(new GetItemCommand({ TableName: bench.stack.tableName, Key: key, ConsistentRead: true })))
      .Item;

  const measure = async (c: Case): Promise<unknown> => {
    await recorder.quiet();
    // Authentication is cached for 30 s: a read-only call first, outside the window, so the row is the operation's.
    if (c.headers['x-service-api-key'] !== undefined) await ok('/v2/workspace/activityconfig/get', {}, c.headers);
    else if (c.headers['x-service-workspace-id'] !== undefined)
      await ok('/v2/workspace/apikeys/get', { pageSize: 1 }, c.headers);
    recorder.start();
    const { value, capacity } = await bench.meter.measure(() => bench.post(c.path, c.data, c.headers));
    const { written, transactions, meterEstimate } = recorder.stop();
    const body: unknown = value.body;
    if (value.status !== 200) throw new Error(`POST ${c.path} answered ${value.status}: ${JSON.stringify(body)}`);
    const result = body !== null && typeof body === 'object' && 'result' in body ? body.result : undefined;

    const after = new Map<string, Item | undefined>();
    for (const { key, deleted } of written) after.set(keyId(key), deleted ? undefined : await readBack(key));
    const wcuFloor = written.reduce((sum, { key }) => {
      const item = after.get(keyId(key));
      return (
        sum +
        Math.max(1, Math.ceil((item === undefined ? 0 : itemBytes(item)) / 1024)) * (c.atomic === undefined ? 1 : 2)
      );
    }, 0);
    // The meter's estimate of each transaction, replaced by what DynamoDB bills: 2 WCU per KB of each written
    // item as it is after the request (1 KB for deletes and checks) and 1 WCU per KB of each of its index entries.
    const billed =
      transactions.reduce((sum, items) => {
        const units = items.reduce((inner, item) => {
          const key = item.Put?.Item ?? item.Update?.Key;
          const stored = key === undefined ? undefined : after.get(keyId(key));
          if (stored === undefined) return inner + 2;
          return (
            inner +
            2 * Math.max(1, Math.ceil(itemBytes(stored) / 1024)) +
            indexEntries(stored).reduce((s, bytes) => s + Math.max(1, Math.ceil(bytes / 1024)), 0)
          );
        }, 0);
        return sum + units;
      }, 0) - meterEstimate;
    rows.push({
      path: c.path,
      what: c.what,
      rcu: capacity.read,
      rcuFloor: c.readFloor(result),
      wcu: capacity.write + billed,
      wcuFloor,
    });
    return result;
  };

  // The workspace and its credentials.
  const ownerEmail = `cost-owner-${Date.now()}@example.com`;
  const workspace = await measure({
    path: '/v2/workspace/create',
    what: 'a workspace with its first key and token',
    data: { ownerEmail, workspaceName: 'Acme' },
    headers: {},
    // The owner's email registry, strongly consistent: it enforces the per-email limit.
    readFloor: checks(1, STRONG),
    atomic: 'a workspace exists with its name claim, key and token or not at all',
  });
  const ws = {
    'x-service-workspace-id': stringAt(workspace, 'data', 'id'),
    'x-service-workspace-auth-token': stringAt(workspace, 'data', 'authToken'),
  };
  const created = await measure({
    path: '/v2/workspace/apikey/create',
    what: 'a testing key with a token',
    data: { apiKeyName: 'Staging', type: 'testing', createAuthToken: true },
    headers: ws,
    readFloor: () => 0,
    atomic: 'a key exists with its token or not at all',
  });
  await measure({
    path: '/v2/workspace/apikeys/get',
    what: 'page of the 2 keys',
    data: { pageSize: 10 },
    headers: ws,
    readFloor: page(),
  });
  await measure({
    path: '/v2/workspace/authtoken/reset',
    what: "a key's 1 token replaced",
    data: { apiKey: stringAt(created, 'data', 'apiKey') },
    headers: ws,
    readFloor: () => 0,
    atomic: 'the old token goes exactly when the new one comes',
  });
  const apiKey = Object.keys(valueAt(workspace, 'data', 'apiKeyList') ?? {})[0];
  const tokens = await measure({
    path: '/v2/workspace/authtokens/get',
    what: "a key's 1 token",
    data: { apiKey },
    headers: ws,
    readFloor: page(),
  });
  const h = { 'x-service-api-key': apiKey, 'x-service-auth-token': stringAt(tokens, 'data', 'authTokens', 0, 'token') };

  // Configurations (an update reads nothing in the floor: an UpdateItem of the changed paths needs no read).
  await measure({
    path: '/v2/workspace/activityconfig/update',
    what: 'enable, one trigger off',
    data: { activityServiceConfig: { isEnabled: true, triggers: { comment: { 'comment.reaction_add': false } } } },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/workspace/activityconfig/get',
    what: 'the configuration',
    data: {},
    headers: h,
    readFloor: one(),
  });
  await measure({
    path: '/v2/workspace/emailconfig/update',
    what: 'SendGrid key, sender',
    data: {
      useEmailService: true,
      emailServiceConfig: {
        type: 'sendgrid',
        apiKey: 'SG.example-key',
        fromEmail: 'notifications@example.com',
        fromCompany: 'Acme',
      },
    },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/workspace/emailconfig/get',
    what: 'the configuration',
    data: {},
    headers: h,
    readFloor: one(),
  });
  await ok('/v2/workspace/emailconfig/update', { emailServiceConfig: { type: 'default' } }, h);
  await measure({
    path: '/v2/workspace/apikeyconfig/update',
    what: '1 provider key',
    data: { aiModelApiKey: [{ provider: 'openai', customerApiKey: 'sk-example-openai-key' }] },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/workspace/apikeyconfig/get',
    what: '1 provider key, masked',
    data: {},
    headers: h,
    readFloor: one(),
  });

  // Users: an organization of 1,000 (10 × 100), one Add Users of 100 measured.
  const ORG = 'acme';
  const DOC = 'roadmap-2026';
  const user = (n: number) => ({
    userId: `user-${String(n).padStart(5, '0')}`,
    name: `User ${n}`,
    email: `user${n}@example.com`,
  });
  for (let batch = 0; batch < 9; batch += 1) {
    await ok(
      '/v2/users/add',
      {
        organizationId: ORG,
        createOrganization: batch === 0,
        users: Array.from({ length: 100 }, (_, i) => user(batch * 100 + i)),
      },
      h,
    );
  }
  await measure({
    path: '/v2/users/add',
    what: '100 users to an organization',
    data: { organizationId: ORG, users: Array.from({ length: 100 }, (_, i) => user(900 + i)) },
    headers: h,
    readFloor: () => 0,
    atomic: "one user's profile and membership are written together (docs/api.md, Partial failures)",
  });
  await measure({
    path: '/v2/users/get',
    what: 'page of 1,000 users',
    data: { organizationId: ORG, pageSize: 1000 },
    headers: h,
    readFloor: page(),
  });
  await measure({
    path: '/v2/users/update',
    what: "1 user's name and role",
    data: { organizationId: ORG, users: [{ userId: 'user-00001', name: 'User One', accessRole: 'editor' }] },
    headers: h,
    readFloor: () => 0,
    atomic: "one user's profile and membership change together",
  });
  // A delete must find what the user holds in the organization: one small Query.
  await measure({
    path: '/v2/users/delete',
    what: '1 user from the organization',
    data: { organizationId: ORG, userIds: ['user-00998'] },
    headers: h,
    readFloor: checks(1),
  });
  await measure({
    path: '/v1/users/delete',
    what: '1 user from the organization',
    data: { organizationId: ORG, userIds: ['user-00999'] },
    headers: h,
    readFloor: checks(1),
  });

  // Documents.
  await measure({
    path: '/v2/organizations/documents/add',
    what: '2 documents',
    data: {
      organizationId: ORG,
      documents: [
        { documentId: DOC, documentName: 'Roadmap 2026', accessType: 'organizationPrivate' },
        { documentId: 'draft-2025', documentName: 'Roadmap draft', accessType: 'restricted' },
      ],
    },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/organizations/documents/update',
    what: '1 document renamed',
    data: {
      organizationId: ORG,
      documents: [{ documentId: DOC, documentName: 'Roadmap 2026 (final)', metadata: { owner: 'ann' } }],
    },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/organizations/documents/get',
    what: '1 document by id',
    data: { organizationId: ORG, documentIds: [DOC] },
    headers: h,
    readFloor: byId(),
  });
  await measure({
    path: '/v2/organizations/documents/access/disablestate/update',
    what: '1 document disabled',
    data: { organizationId: ORG, documentIds: ['draft-2025'], disabled: true },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v1/organizations/documents/access/disablestate/update',
    what: '1 document enabled',
    data: { organizationId: ORG, documentIds: ['draft-2025'], disabled: false },
    headers: h,
    readFloor: () => 0,
  });

  // Permissions and groups.
  const resources = [{ type: 'document', id: DOC, organizationId: ORG, accessRole: 'editor', expiresAt: 1893456000 }];
  await measure({
    path: '/v2/auth/permissions/add',
    what: '1 document grant',
    data: { user: { userId: 'user-00002' }, permissions: { resources } },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/auth/permissions/get',
    what: "a user's grants in an organization (1)",
    data: { userId: 'user-00002', organizationId: ORG },
    headers: h,
    readFloor: page(),
  });
  await measure({
    path: '/v2/auth/permissions/remove',
    what: '1 document grant',
    data: { userId: 'user-00002', permissions: { resources: [{ type: 'document', id: DOC, organizationId: ORG }] } },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/organizations/usergroups/add',
    what: '1 group',
    data: { organizationId: ORG, organizationUserGroups: [{ groupId: 'design', groupName: 'Design team' }] },
    headers: h,
    readFloor: () => 0,
  });
  // The two users must be members of the organization: two small items checked.
  await measure({
    path: '/v2/organizations/usergroups/users/add',
    what: '2 members to a group',
    data: { organizationId: ORG, organizationUserGroupId: 'design', userIds: ['user-00001', 'user-00002'] },
    headers: h,
    readFloor: checks(2),
  });
  await measure({
    path: '/v2/organizations/usergroups/users/delete',
    what: '1 member from a group',
    data: { organizationId: ORG, organizationUserGroupId: 'design', userIds: ['user-00002'] },
    headers: h,
    readFloor: () => 0,
  });

  // Notifications: a mention of one user.
  const notification = {
    organizationId: ORG,
    documentId: DOC,
    actionUser: { userId: 'user-00001', name: 'User One' },
    displayHeadlineMessageTemplate: '{{actionUser}} mentioned you in {{document}}',
    displayHeadlineMessageTemplateData: { actionUser: { name: 'User One' }, document: 'Roadmap 2026' },
    displayBodyMessage: 'Can you review the Q3 milestones?',
    notifyUsers: [{ userId: 'user-00002' }],
  };
  for (let i = 0; i < 19; i += 1)
    await ok('/v2/notifications/add', { ...notification, displayBodyMessage: `Earlier mention ${i}` }, h);
  const added = await measure({
    path: '/v2/notifications/add',
    what: 'a mention of 1 user',
    data: notification,
    headers: h,
    readFloor: () => 0,
  });
  const notificationId = stringAt(added, 'data', 'notificationId');
  await measure({
    path: '/v2/notifications/get',
    what: "a user's feed, page of 20",
    data: { organizationId: ORG, documentId: DOC, userId: 'user-00002', pageSize: 20 },
    headers: h,
    readFloor: page(),
  });
  await measure({
    path: '/v2/notifications/update',
    what: '1 notification read by 1 user',
    data: {
      organizationId: ORG,
      documentId: DOC,
      notifications: [{ id: notificationId, readByUserIds: ['user-00002'] }],
    },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/notifications/config/set',
    what: "1 user's levels on 1 document",
    data: {
      organizationId: ORG,
      userIds: ['user-00002'],
      documentIds: [DOC],
      config: { inbox: 'MINE', email: 'NONE' },
    },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/notifications/config/get',
    what: "1 user's levels on 1 document",
    data: { organizationId: ORG, userId: 'user-00002', documentIds: [DOC] },
    headers: h,
    readFloor: byId(),
  });
  const second = stringAt(await ok('/v2/notifications/add', notification, h), 'result', 'data', 'notificationId');
  // A delete must find the notification's recipients: one small Query.
  await measure({
    path: '/v2/notifications/delete',
    what: '1 notification (1 recipient)',
    data: { organizationId: ORG, documentId: DOC, notificationIds: [notificationId] },
    headers: h,
    readFloor: checks(1),
  });
  await measure({
    path: '/v1/notifications/delete',
    what: '1 notification (1 recipient)',
    data: { organizationId: ORG, documentId: DOC, notificationIds: [second] },
    headers: h,
    readFloor: checks(1),
  });

  // Activities: 100 records in the document, then the known worst case, one record of 1.5 KB. The configuration is
  // checked (enabled, triggers).
  for (let batch = 0; batch < 2; batch += 1) {
    await ok(
      '/v2/activities/add',
      {
        organizationId: ORG,
        documentId: DOC,
        activities: Array.from({ length: 50 }, (_, i) => activityRecord(`seed-${batch}-${i}`, 600)),
      },
      h,
    );
  }
  const { encodeContent } = await import('../shared/db/activity');
  const activityPage = compressedPage(encodeContent);
  const last = () => rows[rows.length - 1];
  await measure({
    path: '/v2/activities/add',
    what: '1 record of 1.5 KB',
    data: { organizationId: ORG, documentId: DOC, activities: [activityRecord('act-1', 1536)] },
    headers: h,
    readFloor: checks(1),
  });
  const addFour = last();
  await measure({
    path: '/v2/activities/get',
    what: "a document's log, page of 100",
    data: { organizationId: ORG, documentId: DOC, pageSize: 100 },
    headers: h,
    readFloor: activityPage,
  });

  // Issue 16 item 2's targets: 1.5 KB records on all four timelines (organization, document, target, user) of an
  // organization of their own, written as one batch of 100 (no room for the lock check) and one single record;
  // a record on the organization's and the document's timelines only; a page of 100 on each timeline.
  const LOG = 'acme-timelines';
  const sample = activityRecord('act-sample', 1536);
  const sampleBytes = JSON.stringify(sample).length;
  const sampleCompressed = encodeContent(sample as never).content.byteLength;
  await measure({
    path: '/v2/activities/add',
    what: '100 records of 1.5 KB',
    data: {
      organizationId: LOG,
      documentId: DOC,
      activities: Array.from({ length: 100 }, (_, i) => activityRecord(`log-${i}`, 1536)),
    },
    headers: h,
    readFloor: checks(1),
  });
  const addBatch = last();
  await measure({
    path: '/v2/activities/add',
    what: '1 record of 1.5 KB, org + doc timelines only',
    data: {
      organizationId: LOG,
      documentId: DOC,
      activities: [activityRecord('log-orgdoc', 1536, { user: false, target: false })],
    },
    headers: h,
    readFloor: checks(1),
  });
  const addOrgDoc = last();
  await measure({
    path: '/v2/activities/add',
    what: '100 records of 1.5 KB, org + doc timelines only',
    data: {
      organizationId: LOG,
      documentId: DOC,
      activities: Array.from({ length: 100 }, (_, i) =>
        activityRecord(`log-orgdoc-${i}`, 1536, { user: false, target: false }),
      ),
    },
    headers: h,
    readFloor: checks(1),
  });
  const addOrgDocBatch = last();
  await ok(
    '/v2/activities/add',
    { organizationId: LOG, documentId: DOC, activities: [activityRecord('log-100', 1536)] },
    h,
  );
  const timelinePages: Array<[string, Record<string, unknown>]> = [
    ['organization', {}],
    ['document', { documentId: DOC }],
    ['target entity', { targetEntityId: sample.targetEntityId }],
    ['acting user', { userId: sample.actionUser?.userId }],
  ];
  const pages: Array<[string, Row]> = [];
  for (const [timeline, filter] of timelinePages) {
    await measure({
      path: '/v2/activities/get',
      what: `the ${timeline}'s log, page of 100 records of 1.5 KB`,
      data: { organizationId: LOG, ...filter, pageSize: 100 },
      headers: h,
      readFloor: activityPage,
    });
    pages.push([timeline, last()]);
  }
  targets.push(
    {
      goal: 'Add Activities: WCU per 1.5 KB record on 4 timelines, one record a call',
      target: '≤ 6',
      measured: addFour.wcu,
      met: addFour.wcu <= 6,
    },
    {
      goal: 'Add Activities: WCU per 1.5 KB record on 4 timelines, in a batch of 100',
      target: '≤ 6',
      measured: addBatch.wcu / 100,
      met: addBatch.wcu / 100 <= 6,
    },
    {
      goal: 'Add Activities: WCU per 1.5 KB record on org + doc timelines, one record a call',
      target: '≤ 6',
      measured: addOrgDoc.wcu,
      met: addOrgDoc.wcu <= 6,
    },
    {
      goal: 'Add Activities: WCU per 1.5 KB record on org + doc timelines, in a batch of 100',
      target: '≤ 6',
      measured: addOrgDocBatch.wcu / 100,
      met: addOrgDocBatch.wcu / 100 <= 6,
    },
    ...pages.map(([timeline, row]) => ({
      goal: `Get Activities: RCU per page of 100 records of 1.5 KB, ${timeline}'s log`,
      target: '≤ 40',
      measured: row.rcu,
      met: row.rcu <= 40,
    })),
  );
  notes.push(
    `Representative record: ${sampleBytes} B of JSON, stored as ${sampleCompressed} B of brotli (${(sampleBytes / sampleCompressed).toFixed(2)}×).`,
  );

  // Judgments for Suggest Decision.
  const judgment = (id: string, userId: string, accepted: boolean) => ({
    id,
    featureType: 'comment',
    actionType: accepted ? 'comment_annotation.suggestion_accept' : 'comment_annotation.suggestion_reject',
    actionUser: { userId },
    targetEntityId: 'comment-42',
    entityTargetData: { suggestion: 'Rename the checkout button to "Pay now"' },
    entityData: { reason: accepted ? 'Clearer call to action' : 'Too pushy' },
    displayMessageTemplate: `{{actionUser}} ${accepted ? 'accepted' : 'rejected'} a suggestion`,
  });
  await ok(
    '/v2/activities/add',
    {
      organizationId: ORG,
      documentId: DOC,
      activities: Array.from({ length: 20 }, (_, i) => judgment(`judgment-${i}`, user(i).userId, i % 4 !== 0)),
    },
    h,
  );
  // The document's 20 judgments, as the compact index carries them (sized from the index itself): one Query.
  const judgments = await dynamodb.send(
    new QueryCommand({
      TableName: bench.stack.tableName,
      IndexName: 'gsi5',
      KeyConditionExpression: 'gsi5pk = :p',
      ExpressionAttributeValues: { ':p': { S: `T#${apiKey}#JUDGMENTS` } },
    }),
  );
  const judgmentEntries = (judgments.Items ?? []).map(itemBytes);
  if (judgmentEntries.length !== 20) throw new Error(`expected 20 judgments in gsi5, found ${judgmentEntries.length}`);
  await measure({
    path: '/v2/memory/suggest',
    what: "a document's 20 judgments",
    data: { query: 'rename the checkout button', organizationId: ORG, documentId: DOC },
    headers: h,
    readFloor: () => queryRead(judgmentEntries, EVENTUAL),
  });
  // The provider key, strongly consistent: a replaced key must take effect on the next call.
  await measure({
    path: '/v2/rewriter/ask-ai',
    what: 'a short rewrite (fake provider)',
    data: { model: 'gpt-4o', prompt: 'Rewrite the text in a friendly tone.', text: 'The meeting moved to 3 pm.' },
    headers: h,
    readFloor: checks(1, STRONG),
  });

  // Editor data: a 2 KB text.
  const text = (suffix: string) => `${'Roadmap 2026: milestones, owners and dates. '.repeat(45)}${suffix}`;
  await measure({
    path: '/v2/crdt/add',
    what: 'a 2 KB text editor',
    data: {
      organizationId: ORG,
      documentId: DOC,
      editorId: 'body',
      type: 'text',
      data: text('v1'),
      userId: 'user-00001',
    },
    headers: h,
    readFloor: () => 0,
  });
  // An update merges into the stored state: it must read it, strongly consistent.
  await measure({
    path: '/v2/crdt/update',
    what: 'the 2 KB text, one edit',
    data: {
      organizationId: ORG,
      documentId: DOC,
      editorId: 'body',
      type: 'text',
      data: text('v2'),
      userId: 'user-00001',
    },
    headers: h,
    readFloor: () => itemReads([2100], STRONG),
  });
  await measure({
    path: '/v2/crdt/get',
    what: 'the 2 KB text',
    data: { organizationId: ORG, documentId: DOC, editorId: 'body', format: 'json' },
    headers: h,
    readFloor: page(),
  });

  // Recordings.
  const attachment = {
    attachmentId: 1,
    url: 'https://cdn.example.com/r/1.webm',
    mimeType: 'video/webm',
    name: '1.webm',
    type: 'video',
    size: 204800,
  };
  const recording = {
    annotationId: 'rec-1',
    type: 'recorder',
    recordingType: 'screen',
    recordedTime: { duration: 12500, display: '00:12' },
    displayName: 'User One',
    attachments: [attachment],
  };
  await measure({
    path: '/v2/recordings/add',
    what: '1 screen recording',
    data: { organizationId: ORG, documentId: DOC, recordings: [recording] },
    headers: h,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/recordings/get',
    what: '1 recording by id',
    data: { organizationId: ORG, documentId: DOC, recordingIds: ['rec-1'] },
    headers: h,
    readFloor: byId(),
  });

  // Migration of the draft (started; the stream's worker runs it outside the measured request).
  const migration = await measure({
    path: '/v2/organizations/documents/migrate',
    what: 'start moving a document',
    data: { organizationId: ORG, documentId: 'draft-2025', newDocumentId: 'draft-2026' },
    headers: h,
    readFloor: () => 0,
    atomic: 'both documents locked and the migration recorded together',
  });
  await measure({
    path: '/v2/organizations/documents/migrate/status',
    what: "a migration's status",
    data: { organizationId: ORG, migrationId: stringAt(migration, 'data', 'migrationId') },
    headers: h,
    readFloor: one(),
  });

  // Webhooks, on a key of their own (every write of the main key would otherwise become messages). Every
  // endpoint operation first checks that the feature is enabled: one small read.
  const hooks = (await bench.newApiKey()).headers;
  const receiver = await startReceiver(() => 204, '/collab');
  receivers.push(receiver);
  await measure({
    path: '/v2/workspace/advancedwebhookconfig/update',
    what: 'enable',
    data: { isEnabled: true },
    headers: hooks,
    readFloor: () => 0,
  });
  await measure({
    path: '/v2/workspace/advancedwebhookconfig/get',
    what: 'the configuration',
    data: {},
    headers: hooks,
    readFloor: one(),
  });
  const endpoint = await measure({
    path: '/v2/workspace/advancedwebhook/endpoints/create',
    what: 'an endpoint with a uid',
    data: {
      url: receiver.url,
      description: 'Comment events for the support inbox',
      filterTypes: ['notification.add'],
      uid: 'support-inbox',
      metadata: { team: 'support' },
    },
    headers: hooks,
    readFloor: checks(1),
    atomic: 'the endpoint, the count under its limit and the uid claim together',
  });
  const endpointId = stringAt(endpoint, 'data', 'id');
  const spare = stringAt(
    await ok('/v2/workspace/advancedwebhook/endpoints/create', { url: 'https://hooks.example.com/audit' }, hooks),
    'result',
    'data',
    'id',
  );
  await measure({
    path: '/v2/workspace/advancedwebhook/endpoints/get',
    what: 'page of the 2 endpoints',
    data: { limit: 10 },
    headers: hooks,
    readFloor: page(EVENTUAL),
  });
  await measure({
    path: '/v2/workspace/advancedwebhook/endpoints/update',
    what: "an endpoint's description",
    data: { endpointId, description: 'Every notification' },
    headers: hooks,
    readFloor: checks(1),
  });
  // The secret is read strongly consistent: a rotated secret must be the one shown.
  await measure({
    path: '/v2/workspace/advancedwebhook/endpoints/secret/get',
    what: "an endpoint's secret",
    data: { endpointId },
    headers: hooks,
    readFloor: () => EVENTUAL + STRONG,
  });
  await measure({
    path: '/v2/workspace/advancedwebhook/endpoints/secret/rotate',
    what: "an endpoint's secret",
    data: { endpointId },
    headers: hooks,
    readFloor: checks(1),
  });
  await measure({
    path: '/v2/workspace/advancedwebhook/endpoints/delete',
    what: 'an endpoint',
    data: { endpointId: spare },
    headers: hooks,
    readFloor: checks(1),
    atomic: 'the endpoint, its count and its uid claim go together',
  });
  // Messages: 5 notifications through the pipeline to the receiver.
  await ok('/v2/users/add', { organizationId: ORG, createOrganization: true, users: [user(1), user(2)] }, hooks);
  await ok(
    '/v2/organizations/documents/add',
    { organizationId: ORG, documents: [{ documentId: DOC, documentName: 'Roadmap 2026' }] },
    hooks,
  );
  for (let i = 0; i < 5; i += 1)
    await ok('/v2/notifications/add', { ...notification, displayBodyMessage: `Message ${i}` }, hooks);
  await receiver.waitFor(5);
  await recorder.quiet(1000);
  const messages = await measure({
    path: '/v2/workspace/advancedwebhook/messages/get',
    what: 'page of 5 messages',
    data: { pageSize: 20 },
    headers: hooks,
    readFloor: page(EVENTUAL),
  });
  const messageId = stringAt(messages, 'data', 0, 'id');
  await measure({
    path: '/v2/workspace/advancedwebhook/attempts/get',
    what: "a message's 1 attempt",
    data: { messageId },
    headers: hooks,
    readFloor: page(EVENTUAL),
  });
  // A resend reads the message and the endpoint (besides the feature check).
  await measure({
    path: '/v2/workspace/advancedwebhook/messages/resend',
    what: '1 message to 1 endpoint',
    data: { messageId, endpointId },
    headers: hooks,
    readFloor: checks(3),
  });
  await measure({
    path: '/v2/workspace/advancedwebhook/endpoints/recover',
    what: 'no failed deliveries',
    data: { endpointId, since: Date.now() - 60 * 60 * 1000 },
    headers: hooks,
    readFloor: checks(2),
  });

  // The email log: a notification emailed to one user (default transport, the local mailbox).
  const mail = (await bench.newApiKey()).headers;
  await ok(
    '/v2/workspace/emailconfig/update',
    {
      useEmailService: true,
      emailServiceConfig: { type: 'default', fromEmail: 'notify@example.com', fromCompany: 'Acme' },
    },
    mail,
  );
  await ok('/v2/users/add', { organizationId: ORG, createOrganization: true, users: [user(1), user(2)] }, mail);
  await ok(
    '/v2/organizations/documents/add',
    { organizationId: ORG, documents: [{ documentId: DOC, documentName: 'Roadmap 2026' }] },
    mail,
  );
  const emailed = stringAt(await ok('/v2/notifications/add', notification, mail), 'result', 'data', 'notificationId');
  for (let tries = 0; tries < 200; tries += 1) {
    const log = await ok('/v2/workspace/emails/get', { notificationId: emailed }, mail);
    if (listed(valueAt(log, 'result')).some((email) => valueAt(email, 'status') === 'sent')) break;
    await sleep(50);
  }
  await measure({
    path: '/v2/workspace/emails/get',
    what: "a notification's 1 email",
    data: { notificationId: emailed, pageSize: 10 },
    headers: mail,
    readFloor: page(),
  });

  const measured = new Set(rows.map((row) => row.path));
  const missing = routes
    .map((route) => route.path)
    .filter((path) => !measured.has(path) && LEFT_OUT[path] === undefined);
  if (missing.length > 0)
    throw new Error(
      `No cost row for ${missing.map((path) => `POST ${path}`).join(', ')}: add a case to bench/cost.ts (or to LEFT_OUT, with the reason).`,
    );
  return { rows, targets, notes };
}

// ---------------------------------------------------------------------------------------------------------------
// The table

/** The worse side's ratio of consumed to floor; a side with a floor of 0 counts only if it consumed something. */
function ratioOf(row: Row): { value: number; text: string } {
  const sides = [
    { name: 'R', consumed: row.rcu, floor: row.rcuFloor },
    { name: 'W', consumed: row.wcu, floor: row.wcuFloor },
  ].filter((side) => side.floor > 0);
  const worst = sides
    .map((side) => ({ ...side, ratio: side.consumed / side.floor }))
    .sort((a, b) => b.ratio - a.ratio)[0];
  const beyond = [
    { name: 'RCU', consumed: row.rcu, floor: row.rcuFloor },
    { name: 'WCU', consumed: row.wcu, floor: row.wcuFloor },
  ]
    .filter((side) => side.floor === 0 && side.consumed > 0)
    .map((side) => `; ${units(side.consumed)} ${side.name} over a floor of 0`)
    .join('');
  if (worst === undefined) return { value: 0, text: `—${beyond}` };
  const both =
    sides.length === 2
      ? ` (${sides.map((side) => `${side.name} ${(side.consumed / side.floor).toFixed(1)}×`).join(', ')})`
      : '';
  return { value: worst.ratio, text: `${worst.ratio.toFixed(1)}× ${worst.name}${both}${beyond}` };
}

const units = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

function print(rows: Row[]): void {
  const sorted = [...rows].sort((a, b) => ratioOf(b).value - ratioOf(a).value);
  console.log('\nCost per operation: one representative request each, over HTTP on the local stack (the request only;');
  console.log("what the stream's workers consume afterwards is not counted). Floors: bench/cost.ts.\n");
  console.log('| operation | request | RCU | RCU floor | WCU | WCU floor | ratio |');
  console.log('|---|---|---:|---:|---:|---:|---|');
  for (const row of sorted) {
    console.log(
      `| ${row.path} | ${row.what} | ${units(row.rcu)} | ${units(row.rcuFloor)} | ${units(row.wcu)} | ${units(row.wcuFloor)} | ${ratioOf(row).text} |`,
    );
  }
  if (Object.keys(LEFT_OUT).length > 0) {
    console.log('\nLeft out:');
    for (const [path, reason] of Object.entries(LEFT_OUT)) console.log(`- ${path}: ${reason}`);
  }
}

function printTargets(targets: readonly Target[], notes: readonly string[]): void {
  console.log('\nIssue 16 targets, measured (the rows above):\n');
  console.log('| figure | goal | measured | met |');
  console.log('|---|---:|---:|---|');
  for (const target of targets)
    console.log(`| ${target.goal} | ${target.target} | ${units(target.measured)} | ${target.met ? 'yes' : 'no'} |`);
  for (const note of notes) console.log(`\n${note}`);
}
