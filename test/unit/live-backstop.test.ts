/**
 * How old a live connection's last access check may be when a backstop pass meets it (decisions §13: no connection
 * goes 60 s unchecked): a connection just under that age is left to the next pass, so age plus period stays in bound.
 */
import { ACCESS_BOUND_MS, ACCESS_RECHECK_MS, backstopMaxAgeMs } from '../../shared/domain/live/access';

describe("the live access backstop's age bound", () => {
  it.each([1_000, 10_000, 30_000, 60_000, 120_000])(
    'keeps the last check plus the time to the next pass within 60 s, for passes %i ms apart',
    (periodMs) => {
      const maxAge = backstopMaxAgeMs(periodMs);

      expect(maxAge).toBeGreaterThanOrEqual(0);
      if (periodMs <= ACCESS_BOUND_MS) expect(maxAge + periodMs).toBeLessThanOrEqual(ACCESS_BOUND_MS);
    },
  );

  it('re-checks no more often than the room does (50 s) when passes come often, and every connection with one pass a minute', () => {
    expect(backstopMaxAgeMs(1_000)).toBe(ACCESS_RECHECK_MS);
    expect(backstopMaxAgeMs(10_000)).toBe(50_000);
    expect(backstopMaxAgeMs(60_000)).toBe(0);
  });
});
