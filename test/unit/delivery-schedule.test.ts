/**
 * The webhook retry schedule (shared/domain/delivery/schedule.ts), docs/decisions.md §11 "Delivery".
 */
import { config } from '../../shared/core/config';
import {
  AUTO_DISABLE_AFTER_MS,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  retryDelayMs,
} from '../../shared/domain/delivery/schedule';

const HOUR = 3_600_000;
const NO_JITTER = () => 0.5;

describe('retryDelayMs', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after the 1st to 7th failure (no jitter)', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((failed) => retryDelayMs(failed, NO_JITTER, 1));

    expect(delays).toEqual([5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR]);
    expect(RETRY_DELAYS_MS).toEqual(delays);
  });

  it('is exhausted after the 8th failed attempt', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(retryDelayMs(8, NO_JITTER, 1)).toBeUndefined();
    expect(retryDelayMs(9, NO_JITTER, 1)).toBeUndefined();
  });

  it('jitters each delay by at most ±10 %, reaching both ends', () => {
    for (let failed = 1; failed < MAX_ATTEMPTS; failed += 1) {
      const base = RETRY_DELAYS_MS[failed - 1];
      expect(retryDelayMs(failed, () => 0, 1)).toBe(Math.round(base * 0.9));
      expect(retryDelayMs(failed, () => 0.999999999, 1)).toBeCloseTo(base * 1.1, -1);
      for (let i = 0; i < 200; i += 1) {
        const delay = retryDelayMs(failed, Math.random, 1) ?? Number.NaN;
        expect(delay).toBeGreaterThanOrEqual(Math.round(base * 0.9));
        expect(delay).toBeLessThanOrEqual(Math.round(base * 1.1));
      }
    }
  });

  it('spreads delays rather than using one fixed offset', () => {
    const delays = new Set(Array.from({ length: 50 }, () => retryDelayMs(2)));

    expect(delays.size).toBeGreaterThan(10);
  });

  it('divides every delay by the divisor', () => {
    expect(retryDelayMs(1, NO_JITTER, 1000)).toBe(5);
    expect(retryDelayMs(7, NO_JITTER, 1000)).toBe(36_000);
    expect(retryDelayMs(4, () => 0, 100)).toBe(Math.round((2 * HOUR * 0.9) / 100));
  });

  it('uses WEBHOOK_SCHEDULE_DIVISOR by default', () => {
    expect(retryDelayMs(1, NO_JITTER)).toBe(Math.round(5_000 / config.webhookScheduleDivisor));
  });

  it('spans about 27 hours over the 8 attempts', () => {
    const total = (random: () => number) =>
      [1, 2, 3, 4, 5, 6, 7].reduce((sum, failed) => sum + (retryDelayMs(failed, random, 1) ?? 0), 0);

    expect(total(NO_JITTER) / HOUR).toBeCloseTo(27.585, 2);
    expect(total(() => 0) / HOUR).toBeGreaterThan(24.8);
    expect(total(() => 0.999999) / HOUR).toBeLessThan(30.4);
  });

  it('refuses a failure count below 1', () => {
    expect(() => retryDelayMs(0)).toThrow(RangeError);
    expect(() => retryDelayMs(1.5)).toThrow(RangeError);
  });
});

describe('AUTO_DISABLE_AFTER_MS', () => {
  it('is 5 days', () => {
    expect(AUTO_DISABLE_AFTER_MS).toBe(5 * 24 * HOUR);
  });
});
