/**
 * Document migration of a document with ~10,000 items of every kind (members, grants, notifications with two
 * feed entries each, activities, recordings, a ~1 MiB CRDT editor, a setting), started over HTTP on the local
 * stack and run by the stack's stream worker, as in AWS. Reports the time from the Migrate request to the
 * completed status and the DynamoDB capacity the worker used.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { seedDocument, type SeedCounts } from '../test/support/document-seed';
import { startBenchStack } from './harness';

const COUNTS: SeedCounts = {
  members: 2000,
  grants: 500,
  notifications: 1000,
  activities: 3500,
  recordings: 1000,
  editors: 1,
  editorBytes: 1_000_000,
};
/** Items under the old id: members, grants, notification + 2 feed entries each, activities, recordings, 4 CRDT parts, 1 setting. */
const ITEMS = COUNTS.members + COUNTS.grants + 3 * COUNTS.notifications + COUNTS.activities + COUNTS.recordings + 4 + 1;

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  // The bench's own client, outside the meter: watching for completion does not count as the worker's cost.
  const watcher = new DynamoDBClient({
    endpoint: bench.stack.dynamodbEndpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const { apiKeyId, headers } = await bench.newApiKey();
    const organizationId = 'bench-migration-org';
    const call = async (path: string, data: unknown, h: Record<string, string>) => {
      const reply = await bench.post(path, data, h);
      return { statusCode: reply.status, body: reply.body };
    };
    const started = Date.now();
    await seedDocument(call, headers, organizationId, 'doc-old', COUNTS);
    console.log(`\nSeeded ${ITEMS} items in ${((Date.now() - started) / 1000).toFixed(0)} s.`);

    const { migrationKey } = await import('../shared/db/migration');
    const key = migrationKey(apiKeyId, organizationId, 'placeholder');
    let migrationId = '';
    const { ms, capacity } = await bench.meter.measure(async () => {
      const reply = await bench.post(
        '/v2/organizations/documents/migrate',
        { organizationId, documentId: 'doc-old', newDocumentId: 'doc-new' },
        headers,
      );
      migrationId = reply.body.result.data.migrationId;
      const sk = key.sk.replace('placeholder', migrationId);
      for (;;) {
        const { Item } = await watcher.send(
          new GetItemCommand({
            TableName: bench.stack.tableName,
            Key: { pk: { S: key.pk }, sk: { S: sk } },
            ConsistentRead: true,
          }),
        );
        const status = Item?.status?.S;
        if (status === 'completed') return;
        if (status === 'failed') throw new Error('The bench migration failed.');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    const moved = await bench.post(
      '/v2/activities/get',
      { organizationId, documentId: 'doc-new', pageSize: 1 },
      headers,
    );
    if (moved.body.result.data.length !== 1) throw new Error('Nothing arrived under the new id.');

    console.log(
      `Document migration of ${ITEMS} items (${JSON.stringify(COUNTS)}), Migrate request to status completed:\n`,
    );
    console.log('| items | latency s | write capacity | read capacity | DynamoDB calls | WCU per item |');
    console.log('|---:|---:|---:|---:|---:|---:|');
    console.log(
      `| ${ITEMS} | ${(ms / 1000).toFixed(1)} | ${capacity.write.toFixed(0)} | ${capacity.read.toFixed(0)} | ${capacity.calls} | ${(capacity.write / ITEMS).toFixed(2)} |`,
    );
  } finally {
    watcher.destroy();
    await bench.stack.stop();
  }
}
