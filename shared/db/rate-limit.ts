/**
 * Rate-limit counters: one item per (scope, subject, fixed window), incremented atomically with a condition so
 * concurrent requests never exceed the limit. Items expire through TTL shortly after their window.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db } from './client';
import { unlessConditionFails } from './conditional';
import { key, segment } from './keys';

export interface RateDecision {
  allowed: boolean;
  /** Seconds until the current window ends (when a refused caller may try again). */
  retryAfterSeconds: number;
}

/**
 * Counts one event for `subject` under `scope` and tells whether it is within `limit` per `windowSeconds`.
 * A refused event is not counted.
 */
export async function consumeRateLimit(
  scope: string,
  subject: string,
  limit: number,
  windowSeconds: number,
  now = Date.now(),
): Promise<RateDecision> {
  const windowMs = windowSeconds * 1000;
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const retryAfterSeconds = Math.ceil((windowStart + windowMs - now) / 1000);
  const counted = await unlessConditionFails(
    db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: { pk: key('RATE', segment(scope), segment(subject)), sk: key('WINDOW', String(windowStart)) },
        UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':limit': limit,
          ':ttl': Math.ceil((windowStart + 2 * windowMs) / 1000),
        },
      }),
    ),
  );
  return { allowed: counted !== undefined, retryAfterSeconds };
}
