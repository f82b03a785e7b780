/** How the grant check names the IAM permissions of a DynamoDB command (local/grant-check.ts). */
import { dynamodbPermissions, installGrantCheck } from '../../local/grant-check';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';

beforeAll(() => {
  installGrantCheck({ dynamodb: new DynamoDBClient({}), kms: new KMSClient({}), table: 'service-table' });
});

describe('the permissions of a DynamoDB command', () => {
  it('names the action of a single-item command on the table', () => {
    expect(dynamodbPermissions('PutItem', { TableName: 'service-table' })).toEqual([
      { action: 'dynamodb:PutItem', resource: 'table' },
    ]);
  });

  it('names a query on an index as Query on that index', () => {
    expect(dynamodbPermissions('Query', { TableName: 'service-table', IndexName: 'gsi3' })).toEqual([
      { action: 'dynamodb:Query', resource: 'index/gsi3' },
    ]);
  });

  it('names each item of a write transaction as the single-item action IAM checks for it', () => {
    const input = {
      TransactItems: [
        { Put: { TableName: 'service-table' } },
        { Update: { TableName: 'service-table' } },
        { Delete: { TableName: 'service-table' } },
        { ConditionCheck: { TableName: 'service-table' } },
      ],
    };

    expect(dynamodbPermissions('TransactWriteItems', input).map((permission) => permission.action)).toEqual([
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ]);
  });

  it('names a batch by its own action on every table it touches', () => {
    expect(dynamodbPermissions('BatchWriteItem', { RequestItems: { 'service-table': [], other: [] } })).toEqual([
      { action: 'dynamodb:BatchWriteItem', resource: 'table' },
      { action: 'dynamodb:BatchWriteItem', resource: 'table other' },
    ]);
  });

  it('names a command on another table by that table', () => {
    expect(dynamodbPermissions('GetItem', { TableName: 'other' })).toEqual([
      { action: 'dynamodb:GetItem', resource: 'table other' },
    ]);
  });
});
