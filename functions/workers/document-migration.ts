/**
 * The document migration worker, woken by the table's stream (an event source filtered on the migration item in
 * AWS; the local stack's stream poller locally). Each record names a migration to run or resume; a run that
 * fails is reported back as a batch item failure so the stream retries it, until the migration gives up.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { withLogContext } from '../../shared/core/logger';
import { migrationFromItem, type MigrationRecord } from '../../shared/db/migration';
import { recordRunFailure, runMigration } from '../../shared/domain/migration';
import { ACTIVE_MIGRATION_STATUSES, documentMigrationWorker } from '../../shared/workers';

/** Time left for the next invocation to save its place and hand off (the checkpoint and one more page). */
const HAND_OFF_MARGIN_MS = 60_000;

/** The migration a record wakes the worker for, or undefined for any other change of the table. */
function migrationOf(record: DynamoDBRecord): MigrationRecord | undefined {
  const image = record.dynamodb?.NewImage;
  if (image === undefined || (record.eventName !== 'INSERT' && record.eventName !== 'MODIFY')) return undefined;
  const migration = migrationFromItem(unmarshall(image as Record<string, AttributeValue>));
  return migration !== undefined && ACTIVE_MIGRATION_STATUSES.includes(migration.status) ? migration : undefined;
}

// Each call in a log context of its own (shared/core/logger.ts): its lines name the worker, never a request.
export const handler = (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
  withLogContext({ worker: documentMigrationWorker.id }, () => migrate(event, context));

async function migrate(event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - HAND_OFF_MARGIN_MS;
  const batchItemFailures: DynamoDBBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const migration = migrationOf(record);
    if (migration === undefined) continue;
    try {
      await runMigration(migration, { deadline });
    } catch (error) {
      if ((await recordRunFailure(migration, error)) === 'retry') {
        batchItemFailures.push({ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' });
      }
    }
  }
  return { batchItemFailures };
}
