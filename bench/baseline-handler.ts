/** The bench's baseline: a handler that imports only the DynamoDB document client. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export const handler = async () => db.send(new GetCommand({ TableName: 'baseline', Key: { pk: 'a', sk: 'b' } }));
