/**
 * Transactions for invariants that span items. Conflicts with concurrent transactions are retried with jittered
 * backoff; a failed condition is reported per item so the caller can name the rule that was broken.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { AbortedError } from '../http/errors';
import { TABLE_NAME, db } from './client';
import type { ItemKey } from './batch';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** An unconditional Put inside a transaction. */
export const putItem = (item: Record<string, unknown>): TransactItem => ({ Put: { TableName: TABLE_NAME, Item: item } });

/** An unconditional Delete inside a transaction. */
export const deleteItem = (key: ItemKey): TransactItem => ({ Delete: { TableName: TABLE_NAME, Key: { pk: key.pk, sk: key.sk } } });

/** DynamoDB's limit on items per transaction. */
export const MAX_TRANSACT_ITEMS = 100;

/** A condition of the transaction failed. `reasons[i]` is the cancellation code of item i (`None` when it passed). */
export class TransactionCancelledError extends Error {
  constructor(readonly reasons: readonly string[]) {
    super(`Transaction cancelled: ${reasons.join(', ')}`);
    this.name = 'TransactionCancelledError';
  }

  /** True when item `index` failed its condition. */
  failed(index: number): boolean {
    return this.reasons[index] === 'ConditionalCheckFailed';
  }
}

const RETRYABLE = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
const MAX_ATTEMPTS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes `items` atomically. Throws TransactionCancelledError when a condition failed, AbortedError when
 * conflicts with concurrent writers persist after the retries.
 */
export async function transactWrite(items: TransactItem[]): Promise<void> {
  if (items.length === 0) return;
  if (items.length > MAX_TRANSACT_ITEMS) throw new Error(`A transaction holds at most ${MAX_TRANSACT_ITEMS} items.`);
  for (let attempt = 1; ; attempt += 1) {
    try {
      await db.send(new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      const retryable = error instanceof Error && error.name === 'TransactionInProgressException';
      if (!(error instanceof TransactionCanceledException) && !retryable) throw error;
      const reasons = error instanceof TransactionCanceledException
        ? (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None')
        : [];
      if (reasons.includes('ConditionalCheckFailed')) throw new TransactionCancelledError(reasons);
      const conflict = retryable || reasons.some((code) => RETRYABLE.has(code));
      if (!conflict) throw error;
      if (attempt >= MAX_ATTEMPTS) throw new AbortedError('The request conflicted with concurrent changes; retry it.');
      await sleep(Math.random() * Math.min(1000, 15 * 2 ** attempt));
    }
  }
}
