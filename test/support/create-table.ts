/** Creates the test file's table (see table-per-file.ts) from the shared definition before its tests run. */
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamodb } from '../../shared/db/client';
import { createTableInput } from '../../shared/db/table-definition';

const tableName = process.env.TABLE_NAME as string;

beforeAll(async () => {
  await dynamodb.send(new CreateTableCommand(createTableInput(tableName)));
});

afterAll(async () => {
  await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
});
