/**
 * The DynamoDB clients, built once per process. Locally (DYNAMODB_ENDPOINT set) they talk to DynamoDB Local with
 * placeholder credentials; in AWS they use the function's role.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../core/config';

const local = config.dynamodbEndpoint !== undefined;

export const dynamodb = new DynamoDBClient({
  ...(local
    ? {
        endpoint: config.dynamodbEndpoint,
        region: process.env.AWS_REGION ?? 'local',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }
    : {}),
  maxAttempts: 4,
});

/** Document client: plain JS values in and out; undefined attributes are dropped rather than rejected. */
export const db = DynamoDBDocumentClient.from(dynamodb, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

export const TABLE_NAME = config.tableName;
