/**
 * A fold names the deltas it took in on the head and deletes them after it commits (shared/db/crdt.ts): the names
 * must fit beside part 0 of the state under DynamoDB's 400 KB item limit, and a fold at compaction's bounds should
 * name every delta it takes in (a delta it cannot name is deleted inside a transaction, at twice the write units).
 */
import { PART_BYTES, compactionBounds, maxFoldedNamed } from '../../shared/db/crdt';

describe('the deltas a fold names on the head', () => {
  it.each([1_000, 100_000, 1_000_000])('are all of a fold at compaction’s bounds, for a state of %i bytes', (size) => {
    expect(maxFoldedNamed(new Uint8Array(size))).toBeGreaterThanOrEqual(compactionBounds(size).items);
  });

  it('fit beside the largest part 0 under the 400 KB item limit', () => {
    const state = new Uint8Array(3 * PART_BYTES);
    expect(PART_BYTES + maxFoldedNamed(state) * 37).toBeLessThanOrEqual(400 * 1024 - 4 * 1024);
  });
});
