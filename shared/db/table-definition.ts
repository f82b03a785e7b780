/**
 * The table's shape, in one place: the CDK stack, the local stack and the tests all build the table from this.
 * Generic key attributes: each entity module decides what goes into them (see shared/db/keys.ts).
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export const PARTITION_KEY = 'pk';
export const SORT_KEY = 'sk';
/** Epoch seconds; DynamoDB's TTL deletes the item some time after it (readers still check expiry themselves). */
export const TTL_ATTRIBUTE = 'ttl';

export interface IndexDefinition {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  /** Non-key attributes the index carries (ProjectionType INCLUDE); every attribute (ALL) when omitted. */
  readonly include?: readonly string[];
}

/**
 * What the judgments index carries besides the keys (the table's and its own): exactly what Suggest Decision
 * reads (shared/db/judgment.ts writes them on judgment activity items only).
 */
export const JUDGMENT_INDEX_ATTRIBUTES = [
  'judgment',
  'judgedText',
  'judgmentReason',
  'userId',
  'timestamp',
  'documentId',
] as const;

/**
 * What the activity timeline indexes carry besides the keys: exactly what a page of Get Activities, a FilterExpression
 * on a timeline and document migration read (shared/db/activity.ts writes them). Not the other timelines' keys,
 * nor the organization id (every reader of a timeline knows it): an entry of a 1.5 KB record stays within 1 KB.
 */
export const ACTIVITY_TIMELINE_ATTRIBUTES = [
  'documentId',
  'featureType',
  'actionType',
  'userId',
  'content',
  'size',
] as const;

/** What the comment count index carries besides the keys: who wrote a thread's last comment (its unread rule). */
export const COMMENT_COUNT_ATTRIBUTES = ['lastCommentBy'] as const;

/** The sort key every activity timeline index shares: an activity item carries its position once. */
const ACTIVITY_POSITION = 'gsi6sk';

/** Global secondary indexes; an item joins an index by setting its keys. */
export const GLOBAL_INDEXES: readonly IndexDefinition[] = [
  // Shared by the entities that list through them (memberships, notifications, email log, webhooks, ...), which
  // read whole items: projection ALL.
  { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  // Sparse: only judgment activity items set its keys (Suggest Decision). A compact projection, so a suggest call
  // reads ~0.45 KB per judgment instead of the whole record.
  { name: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk', include: JUDGMENT_INDEX_ATTRIBUTES },
  // Activity logs: the organization's, a document's, a target entity's and an acting user's timeline, of activity
  // items only, sharing one sort key and a slim projection (docs/architecture.md "Access patterns" has the layouts measured).
  // (They replace the ALL-projected gsi4 and the shared gsi1-gsi3 as activity timelines, before any deployment; a
  // local table made earlier keeps an unused gsi4.) CloudFormation adds one GSI per stack update: once deployed,
  // add any further index in a deployment of its own.
  { name: 'gsi6', partitionKey: 'gsi6pk', sortKey: ACTIVITY_POSITION, include: ACTIVITY_TIMELINE_ATTRIBUTES },
  { name: 'gsi7', partitionKey: 'gsi7pk', sortKey: ACTIVITY_POSITION, include: ACTIVITY_TIMELINE_ATTRIBUTES },
  { name: 'gsi8', partitionKey: 'gsi8pk', sortKey: ACTIVITY_POSITION, include: ACTIVITY_TIMELINE_ATTRIBUTES },
  { name: 'gsi9', partitionKey: 'gsi9pk', sortKey: ACTIVITY_POSITION, include: ACTIVITY_TIMELINE_ATTRIBUTES },
  // Comment threads of a document by their last comment (shared/db/comment-annotation.ts): what Count Comment
  // Annotations reads, ~0.25 KB per thread instead of the thread's head (the keys and who wrote the last comment).
  { name: 'gsi10', partitionKey: 'gsi10pk', sortKey: 'gsi10sk', include: COMMENT_COUNT_ATTRIBUTES },
];

/** The DynamoDB projection of an index. */
export function projectionOf(
  index: IndexDefinition,
): { ProjectionType: 'ALL' } | { ProjectionType: 'INCLUDE'; NonKeyAttributes: string[] } {
  return index.include === undefined
    ? { ProjectionType: 'ALL' }
    : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] };
}

/** CreateTable input for DynamoDB Local and the tests (on-demand, stream with new and old images). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  // Indexes may share a key attribute (the activity timelines' sort key): each is defined once.
  const keyAttributes = [
    ...new Set([PARTITION_KEY, SORT_KEY, ...GLOBAL_INDEXES.flatMap((i) => [i.partitionKey, i.sortKey])]),
  ];
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: keyAttributes.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
      { AttributeName: SORT_KEY, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
      IndexName: index.name,
      KeySchema: [
        { AttributeName: index.partitionKey, KeyType: 'HASH' },
        { AttributeName: index.sortKey, KeyType: 'RANGE' },
      ],
      Projection: projectionOf(index),
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}
