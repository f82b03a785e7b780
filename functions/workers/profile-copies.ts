/**
 * The profile-copies worker (shared/domain/profile-copies.ts): woken by the table's stream for each profile written
 * and each membership added (the filters of `profileCopiesWorker` in shared/workers.ts), it brings the copies of
 * name, email and initial on the users' memberships in step with their profiles. A batch that fails is retried
 * whole by the event source; writing a copy twice is harmless.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { logger, withLogContext } from '../../shared/core/logger';
import { copyChangeOf, keepCopiesInStep } from '../../shared/domain/profile-copies';
import { profileCopiesWorker } from '../../shared/workers';

type Image = Record<string, AttributeValue>;

const imageOf = (value: unknown) => (value === undefined ? undefined : unmarshall(value as Image));

// Each call in a log context of its own (shared/core/logger.ts): its lines name the worker, never a request.
export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> =>
  withLogContext({ worker: profileCopiesWorker.id }, () => bringCopiesInStep(event));

async function bringCopiesInStep(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const changes = event.Records.flatMap((record) => {
    const change = copyChangeOf({ eventName: record.eventName, newImage: imageOf(record.dynamodb?.NewImage), oldImage: imageOf(record.dynamodb?.OldImage) });
    return change === undefined ? [] : [change];
  });
  try {
    await keepCopiesInStep(changes);
    return { batchItemFailures: [] };
  } catch (error) {
    logger.error('Profile copies not brought in step; the stream will retry the batch.', { error });
    // The whole batch again, from its first record: every change in it is safe to apply twice.
    const first = event.Records[0]?.dynamodb?.SequenceNumber;
    return { batchItemFailures: first === undefined ? [] : [{ itemIdentifier: first }] };
  }
}
