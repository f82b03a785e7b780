import type { handler as CreateHandler } from '../../functions/workspace/create';
import { invoke } from '../support/invoke';
import { uniqueEmail } from '../support/ids';

/** Loads Create Workspace with WORKSPACE_CREATE_LIMIT_PER_HOUR set (configuration is read once, at load). */
function createWithLimit(limit: string): typeof CreateHandler {
  let handler: typeof CreateHandler | undefined;
  jest.isolateModules(() => {
    process.env.WORKSPACE_CREATE_LIMIT_PER_HOUR = limit;
    handler = (require('../../functions/workspace/create') as { handler: typeof CreateHandler }).handler;
  });
  process.env.WORKSPACE_CREATE_LIMIT_PER_HOUR = '0';
  return handler as typeof CreateHandler;
}

/** Whole seconds from `at` to the end of its one-hour window: when a refused caller's next attempt counts again. */
const secondsLeftInHour = (at: number) => Math.ceil((Math.floor(at / 3_600_000 + 1) * 3_600_000 - at) / 1000);

describe('Create Workspace rate limit per source IP', () => {
  it('refuses the creation past the hourly limit with RESOURCE_EXHAUSTED and Retry-After, per IP', async () => {
    const create = createWithLimit('3');
    const ip = '203.0.113.7';
    const attempt = (sourceIp: string) =>
      invoke(create, '/v2/workspace/create', { ownerEmail: uniqueEmail() }, { sourceIp });

    const allowed = [await attempt(ip), await attempt(ip), await attempt(ip)];
    const before = Date.now();
    const refused = await attempt(ip);
    const after = Date.now();
    const otherIp = await attempt('198.51.100.9');

    expect(allowed.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    expect(refused.statusCode).toBe(429);
    expect(refused.body.error).toEqual({
      status: 'RESOURCE_EXHAUSTED',
      message: 'Too many requests. Please try again later.',
    });
    // Waiting lifts this limit: Retry-After is the time left in the window, when the next attempt is allowed.
    expect(Number(refused.headers['Retry-After'])).toBeGreaterThanOrEqual(secondsLeftInHour(after));
    expect(Number(refused.headers['Retry-After'])).toBeLessThanOrEqual(secondsLeftInHour(before));
    expect(otherIp.statusCode).toBe(200);
  });

  it('never lets parallel requests from one IP exceed the limit', async () => {
    const create = createWithLimit('5');
    const ip = '203.0.113.99';

    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        invoke(create, '/v2/workspace/create', { ownerEmail: uniqueEmail() }, { sourceIp: ip }),
      ),
    );

    expect(responses.filter((r) => r.statusCode === 200)).toHaveLength(5);
    expect(responses.filter((r) => r.statusCode === 429)).toHaveLength(7);
  });

  it('does not limit at all when the limit is 0', async () => {
    const create = createWithLimit('0');

    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        invoke(create, '/v2/workspace/create', { ownerEmail: uniqueEmail() }, { sourceIp: '203.0.113.50' }),
      ),
    );

    expect(responses.every((r) => r.statusCode === 200)).toBe(true);
  });
});
