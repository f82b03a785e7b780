/**
 * Conditional writes whose refusal is an answer, not an error: "only if it still exists", "only once", "only while
 * the attempt is the one we read". DynamoDB refuses such a write with ConditionalCheckFailedException; the entity
 * modules ask for it here instead of catching it at every call.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/**
 * Awaits `write` (a conditional PutItem, UpdateItem or DeleteItem, already sent) and returns its output, or
 * undefined when DynamoDB refused it because its condition failed. Anything else it throws is thrown on. A write
 * that succeeded always has an output (an object), so `!== undefined` reads as "it was written".
 *
 * Sites that need the refused item itself (ReturnValuesOnConditionCheckFailure) or a transaction's cancellation
 * reasons catch the error themselves (versioned-item.ts, transact.ts).
 */
export async function unlessConditionFails<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
