import { randomBytes } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../local/local-stack';
import { dynamodb } from '../../shared/db/client';
import { createTableInput, GLOBAL_INDEXES } from '../../shared/db/table-definition';

describe('the local stack table', () => {
  it('gains the indexes the definition added since a persisted table was created', async () => {
    const tableName = `old-${randomBytes(4).toString('hex')}`;
    const full = createTableInput(tableName);
    await dynamodb.send(
      new CreateTableCommand({
        ...full,
        AttributeDefinitions: full.AttributeDefinitions?.filter((a) =>
          ['pk', 'sk', 'gsi1pk', 'gsi1sk'].includes(String(a.AttributeName)),
        ),
        GlobalSecondaryIndexes: full.GlobalSecondaryIndexes?.slice(0, 1),
      }),
    );

    await ensureTable(String(process.env.DYNAMODB_ENDPOINT), tableName);

    const { Table } = await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
    expect((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort()).toEqual(
      GLOBAL_INDEXES.map((i) => i.name).sort(),
    );
    await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
  });
});
