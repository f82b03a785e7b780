/**
 * Calls made close together, merged into one: each call's input waits up to `windowMs` (or until `maxBatch` inputs
 * wait), then `flush` runs once with all of them, and each caller gets its own result, or the flush's error. For a
 * worker that handles several jobs side by side and makes the same kind of request for each: their reads become one
 * BatchGetItem, their puts one BatchWriteItem (a DataLoader without the cache).
 */
export interface CoalesceOptions {
  /** How long the first waiting input waits for others, ms. */
  windowMs: number;
  /** Inputs merged at most; reaching it flushes at once. */
  maxBatch: number;
}

/** `flush` must answer one output per input, in order. */
export function coalesced<I, O>(
  flush: (inputs: readonly I[]) => Promise<readonly O[]>,
  options: CoalesceOptions,
): (input: I) => Promise<O> {
  let waiting: Array<{ input: I; resolve: (output: O) => void; reject: (error: unknown) => void }> = [];
  let timer: NodeJS.Timeout | undefined;
  const run = (): void => {
    clearTimeout(timer);
    timer = undefined;
    const batch = waiting;
    waiting = [];
    Promise.resolve()
      .then(() => flush(batch.map((entry) => entry.input)))
      .then((outputs) => {
        if (outputs.length !== batch.length)
          throw new Error(`coalesced: flush answered ${outputs.length} outputs for ${batch.length} inputs.`);
        batch.forEach((entry, i) => entry.resolve(outputs[i]));
      })
      .catch((error: unknown) => batch.forEach((entry) => entry.reject(error)));
  };
  return (input) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (waiting.length >= options.maxBatch) run();
      else timer ??= setTimeout(run, options.windowMs);
    });
}
