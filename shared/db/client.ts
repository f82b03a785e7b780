/**
 * The DynamoDB clients, built once per process. Locally (DYNAMODB_ENDPOINT set) they talk to DynamoDB Local with
 * placeholder credentials; in AWS they use the function's role.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../core/config';

const local = config.dynamodbEndpoint !== undefined;

/**
 * Attempts per call (the SDK retries throttling and server errors with backoff). Locally more: DynamoDB Local answers
 * a write that waited too long for its lock on an item with InternalServerError ("This request will succeed in actual
 * DynamoDB API"), which a busy machine meets when many writes of one item queue (200 concurrent updates of one
 * configuration failed 11 of them with 4 attempts at a load of 15 on 2 cores).
 */
const MAX_ATTEMPTS = local ? 10 : 4;

export const dynamodb = new DynamoDBClient({
  ...(local
    ? {
        endpoint: config.dynamodbEndpoint,
        region: process.env.AWS_REGION ?? 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : {}),
  maxAttempts: MAX_ATTEMPTS,
});

/** Document client: plain JS values in and out; undefined attributes are dropped rather than rejected. */
export const db = DynamoDBDocumentClient.from(dynamodb, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

export const TABLE_NAME = config.tableName;
