/**
 * Creates the test file's table (see table-per-file.ts) from the shared definition before its tests run, without its
 * stream unless the file reads it (connected-environment.ts says why), and runs the deploy tasks on it as a deployment
 * would (the page-token key), under their grants. When the file ends, deletes the table and removes the temporary
 * folders table-per-file.ts made for it (its queue and mailbox).
 */
import { rmSync } from 'node:fs';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamodb } from '../../shared/db/client';
import { createTableInput } from '../../shared/db/table-definition';
import { runDeployTasks } from '../../local/deploy-tasks';

const tableName = process.env.TABLE_NAME as string;
/** Set by connected-environment.ts for a file with the `@table-stream` pragma (not imported: it loads Jest's environment). */
const withStream = process.env.TABLE_STREAM === 'on';

beforeAll(async () => {
  const { StreamSpecification, ...withoutStream } = createTableInput(tableName);
  const input = withStream ? { ...withoutStream, StreamSpecification } : withoutStream;
  await dynamodb.send(new CreateTableCommand(input));
  await runDeployTasks();
});

afterAll(async () => {
  await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
  for (const dir of (process.env.FILE_TEMP_DIRS ?? '').split('\n').filter(Boolean))
    rmSync(dir, { recursive: true, force: true });
});
