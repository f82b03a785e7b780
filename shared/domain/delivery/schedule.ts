/**
 * The retry schedule of the delivery queue's jobs: a webhook delivery (docs/decisions.md §11 "Delivery") and an
 * email (§12) alike: after a failed attempt the next one
 * comes 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h later, each with up to ±10 % jitter (8 attempts over about
 * 27 h); after the 8th failure the delivery is exhausted. An endpoint with nothing but failures for 5 days is
 * disabled. WEBHOOK_SCHEDULE_DIVISOR compresses the schedule for tests (1 in production).
 */
import { config } from '../../core/config';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The wait after the 1st, 2nd, … 7th failed attempt, before jitter. */
export const RETRY_DELAYS_MS: readonly number[] = [
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  10 * HOUR,
];

/** The first attempt and one after each delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The largest share by which jitter moves a delay either way. */
export const RETRY_JITTER = 0.1;

/** An endpoint whose deliveries have only failed for this long is disabled. */
export const AUTO_DISABLE_AFTER_MS = 5 * 24 * HOUR;

/**
 * The wait in whole ms before the next attempt, after `failedAttempts` attempts have failed (1 to 7), jittered
 * by up to ±10 % (`random` in [0, 1): 0 is −10 %, 0.5 none, towards 1 +10 %) and divided by `divisor`;
 * undefined once MAX_ATTEMPTS attempts have failed (the delivery is exhausted). Throws on a count below 1.
 */
export function retryDelayMs(
  failedAttempts: number,
  random: () => number = Math.random,
  divisor: number = config.webhookScheduleDivisor,
): number | undefined {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1)
    throw new RangeError(`failedAttempts must be a whole number from 1, got ${failedAttempts}.`);
  if (failedAttempts >= MAX_ATTEMPTS) return undefined;
  const base = RETRY_DELAYS_MS[failedAttempts - 1];
  const jitter = (random() * 2 - 1) * RETRY_JITTER;
  return Math.round((base * (1 + jitter)) / divisor);
}
