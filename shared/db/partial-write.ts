/**
 * A write in several steps (transactions, or batches of 25) that stopped part way. Every step is atomic, so each
 * part the caller handed in (a user, a group, a recording) is either wholly written or not at all; `committed`
 * lists the parts that are. Thrown only once something was written: when the first step fails, its own error is
 * thrown, and the request answers that error with nothing written.
 */
export class PartialWriteError extends Error {
  constructor(
    /** Indexes, in the caller's list, of the parts that were written. */
    readonly committed: ReadonlySet<number>,
    /** What stopped the write. */
    override readonly cause: unknown,
  ) {
    super(
      `The write stopped after ${committed.size} part(s): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'PartialWriteError';
  }
}
