import { coalesced } from '../../shared/core/coalesce';

function recorder() {
  const flushes: number[][] = [];
  const flush = async (inputs: readonly number[]) => {
    flushes.push([...inputs]);
    return inputs.map((n) => n * 10);
  };
  return { flushes, flush };
}

describe('coalesced', () => {
  it('merges calls made within the window into one flush, each caller getting its own output', async () => {
    const { flushes, flush } = recorder();
    const call = coalesced(flush, { windowMs: 5, maxBatch: 10 });

    const outputs = await Promise.all([call(1), call(2), call(3)]);

    expect(outputs).toEqual([10, 20, 30]);
    expect(flushes).toEqual([[1, 2, 3]]);
  });

  it('flushes at once when maxBatch inputs wait, and the rest in the next flush', async () => {
    const { flushes, flush } = recorder();
    const call = coalesced(flush, { windowMs: 1000, maxBatch: 2 });

    const started = Date.now();
    const outputs = await Promise.all([call(1), call(2), call(3), call(4)]);

    expect(outputs).toEqual([10, 20, 30, 40]);
    expect(flushes).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('keeps calls further apart than the window in separate flushes', async () => {
    const { flushes, flush } = recorder();
    const call = coalesced(flush, { windowMs: 1, maxBatch: 10 });

    await call(1);
    await call(2);

    expect(flushes).toEqual([[1], [2]]);
  });

  it('rejects every caller of a flush that fails, and the next flush runs afresh', async () => {
    let fail = true;
    const call = coalesced(
      async (inputs: readonly number[]) => {
        if (fail) throw new Error('storage unreachable');
        return inputs;
      },
      { windowMs: 1, maxBatch: 10 },
    );

    const results = await Promise.allSettled([call(1), call(2)]);
    fail = false;

    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(await call(3)).toBe(3);
  });

  it('rejects when the flush answers a different number of outputs than inputs', async () => {
    const call = coalesced(async () => [1], { windowMs: 1, maxBatch: 10 });

    await expect(Promise.all([call(1), call(2)])).rejects.toThrow('flush answered 1 outputs for 2 inputs');
  });
});
