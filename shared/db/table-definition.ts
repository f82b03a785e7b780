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
}

/** Generic global secondary indexes with all attributes projected; an item joins an index by setting its keys. */
export const GLOBAL_INDEXES: readonly IndexDefinition[] = [
  { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
  { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk' },
  // Activity logs need four timelines (organization, document, target entity, acting user) besides the record's
  // own key. CloudFormation adds one GSI per stack update: add any further index in a deployment of its own.
  { name: 'gsi4', partitionKey: 'gsi4pk', sortKey: 'gsi4sk' },
];

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
      Projection: { ProjectionType: 'ALL' },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
  };
}
