/**
 * Transactions for invariants that span items. Conflicts with concurrent transactions are retried with jittered
 * backoff; a failed condition becomes the error its item was named with, so callers never map failures by position.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { AbortedError } from '../core/errors';
import { TABLE_NAME, db } from './client';
import type { ItemKey } from './batch';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** An unconditional Put inside a transaction. */
export const putItem = (item: Record<string, unknown>): TransactItem => ({
  Put: { TableName: TABLE_NAME, Item: item },
});

/** An unconditional Delete inside a transaction. */
export const deleteItem = (key: ItemKey): TransactItem => ({
  Delete: { TableName: TABLE_NAME, Key: { pk: key.pk, sk: key.sk } },
});

/** DynamoDB's limit on items per transaction. */
export const MAX_TRANSACT_ITEMS = 100;

/**
 * A condition of the transaction failed that no builder gave a meaning to (see `named`): a bug, answered INTERNAL.
 * `reasons[i]` is the cancellation code of item i (`None` when it passed), for the log.
 */
export class TransactionCancelledError extends Error {
  constructor(readonly reasons: readonly string[]) {
    super(`Transaction cancelled: ${reasons.join(', ')}`);
    this.name = 'TransactionCancelledError';
  }
}

/** What a failed condition means: the error the operation answers (or a class its caller catches). */
export type ConditionFailure = () => Error;

const meanings = new WeakMap<TransactItem, ConditionFailure>();

/**
 * Names what `item`'s condition failing means and returns the item. A db builder of a conditional item names a
 * default ("Document not found."); a caller composing a transaction may name another. transactWrite throws the
 * meaning of the first failed item, so no caller reads cancellation reasons by position.
 */
export function named(item: TransactItem, failure: ConditionFailure): TransactItem {
  meanings.set(item, failure);
  return item;
}

const RETRYABLE = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
const MAX_ATTEMPTS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes `items` atomically. When a condition fails, throws what the first failed item's condition means (see
 * `named`; TransactionCancelledError for one without a meaning); AbortedError when conflicts with concurrent
 * writers persist after the retries.
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
      const reasons =
        error instanceof TransactionCanceledException
          ? (error.CancellationReasons ?? []).map((reason) => reason.Code ?? 'None')
          : [];
      if (reasons.includes('ConditionalCheckFailed')) throw meaningOf(items, reasons);
      const conflict = retryable || reasons.some((code) => RETRYABLE.has(code));
      if (!conflict) throw error;
      if (attempt >= MAX_ATTEMPTS) throw new AbortedError('The request conflicted with concurrent changes; retry it.');
      await sleep(Math.random() * Math.min(1000, 15 * 2 ** attempt));
    }
  }
}

/** The error of the first failed condition that has a meaning, else TransactionCancelledError. */
function meaningOf(items: readonly TransactItem[], reasons: readonly string[]): Error {
  for (const [i, code] of reasons.entries()) {
    const failure = code === 'ConditionalCheckFailed' ? meanings.get(items[i]) : undefined;
    if (failure !== undefined) return failure();
  }
  return new TransactionCancelledError(reasons);
}
