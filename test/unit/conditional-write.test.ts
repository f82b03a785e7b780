import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { unlessConditionFails } from '../../shared/db/conditional';

const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

describe('unlessConditionFails', () => {
  it("returns the write's output when it succeeds", async () => {
    const output = { Attributes: { pk: 'T#k', version: 2 }, $metadata: {} };
    await expect(unlessConditionFails(Promise.resolve(output))).resolves.toBe(output);
  });

  it('gives undefined when DynamoDB refused the write because its condition failed', async () => {
    await expect(unlessConditionFails(Promise.reject(conditionFailed()))).resolves.toBeUndefined();
  });

  it('throws on anything else, the same error', async () => {
    const throttled = new Error('Rate exceeded');
    await expect(unlessConditionFails(Promise.reject(throttled))).rejects.toBe(throttled);
    // A transaction's condition failures are cancellation reasons, not this error (shared/db/transact.ts reads them).
    const cancelled = new TransactionCanceledException({
      message: 'Transaction cancelled',
      $metadata: {},
      CancellationReasons: [{ Code: 'ConditionalCheckFailed' }],
    });
    await expect(unlessConditionFails(Promise.reject(cancelled))).rejects.toBe(cancelled);
  });
});
