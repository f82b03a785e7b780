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
export const JUDGMENT_INDEX_ATTRIBUTES = ['judgment', 'judgedText', 'judgmentReason', 'userId', 'timestamp', 'documentId'] as const;

/** Global secondary indexes; an item joins an index by setting its keys. */
export const GLOBAL_INDEXES: readonly IndexDefinition[] = [
  { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  // Activity logs need four timelines (organization, document, target entity, acting user) besides the record's
  // own key. CloudFormation adds one GSI per stack update: add any further index in a deployment of its own.
  { name: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk' },
  // Sparse: only judgment activity items set its keys (Suggest Decision). A compact projection, so a suggest call
  // reads ~0.45 KB per judgment instead of the whole record. Deploy it on its own, like gsi4.
  { name: 'gsi5', partitionKey: 'gsi5pk', sortKey: 'gsi5sk', include: JUDGMENT_INDEX_ATTRIBUTES },
];

/** The DynamoDB projection of an index. */
export function projectionOf(index: IndexDefinition): { ProjectionType: 'ALL' } | { ProjectionType: 'INCLUDE'; NonKeyAttributes: string[] } {
  return index.include === undefined ? { ProjectionType: 'ALL' } : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] };
}

/** CreateTable input for DynamoDB Local and the tests (on-demand, stream with new and old images). */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const keyAttributes = [PARTITION_KEY, SORT_KEY, ...GLOBAL_INDEXES.flatMap((i) => [i.partitionKey, i.sortKey])];
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
