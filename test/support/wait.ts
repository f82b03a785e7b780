/**
 * Waiting for a condition, the one way the tests wait (issue 22): poll until the condition holds, with a ceiling
 * that only a broken run reaches. A wait ends as soon as its condition holds, so a generous ceiling costs a quiet
 * machine nothing, while a busy one (two other processes on the 2 cores make everything about three times slower)
 * still passes. Never race a fixed budget: a test that needs something to have happened waits for it here.
 */

/** The ceiling of every wait: far beyond what any condition needs on a machine three times slower than a quiet one. */
export const WAIT_CEILING_MS = 180_000;

/**
 * jest's limit for a test or hook, set in jest.config.js: above a wait's ceiling, so a wait that runs out reports
 * what it was waiting for instead of jest's bare "Exceeded timeout".
 */
export const TEST_CEILING_MS = 300_000;

export interface WaitOptions {
  /** Give up after this long (default WAIT_CEILING_MS). */
  ceilingMs?: number;
  /** Time between two checks (default 50 ms). */
  intervalMs?: number;
  /** What is awaited, for the error when the ceiling is reached. */
  what?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reads `read()` until `done` holds for its value, and returns that value.
 * @throws Error naming `what` and the last value read, when the ceiling is reached first.
 */
export async function eventually<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  options: WaitOptions = {},
): Promise<T> {
  const ceilingMs = options.ceilingMs ?? WAIT_CEILING_MS;
  const deadline = Date.now() + ceilingMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`${options.what ?? 'Condition'} not met within ${ceilingMs} ms; last value: ${describe(value)}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}

/**
 * Waits until `check()` is true.
 * @throws Error naming `what`, when the ceiling is reached first.
 */
export async function waitFor(check: () => boolean | Promise<boolean>, options: WaitOptions = {}): Promise<void> {
  await eventually(check, (held) => held, options);
}

function describe(value: unknown): string {
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 500);
  } catch {
    return String(value);
  }
}
