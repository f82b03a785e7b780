/**
 * The nested stack of every route is recorded and never derived from the route table's order (infra/route-stack.ts):
 * a deployed route that moved to another nested stack would fail the deployment.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROUTES_PER_STACK, RECORDED_ROUTE_STACKS, areaOf, groupRoutes } from '../../infra/route-stack';
import { routes, type Route } from '../../shared/routes';

const stackOf = (table: readonly Route[], recorded = RECORDED_ROUTE_STACKS) =>
  new Map(
    groupRoutes(table, ROUTES_PER_STACK, recorded).flatMap((group) =>
      group.routes.map((route) => [route.path, group.id]),
    ),
  );

/** A route of `area` that the table does not have. */
const extra = (area: string, name: string): Route => ({
  path: `/v2/${area}/${name}`,
  entry: 'functions/users/get.ts',
  auth: 'apiKey',
  table: 'read',
});

describe('the nested stack of each route', () => {
  it('is recorded for every route of the table, and nothing else is (npm run route-stacks records a new one)', () => {
    expect(routes.map((route) => route.path).filter((path) => RECORDED_ROUTE_STACKS[path] === undefined)).toEqual([]);
    expect(Object.keys(RECORDED_ROUTE_STACKS).filter((path) => !routes.some((route) => route.path === path))).toEqual(
      [],
    );
  });

  it('is what the file records, written as npm run route-stacks writes it', () => {
    const file = JSON.parse(readFileSync(join(__dirname, '..', '..', 'infra', 'route-stacks.json'), 'utf8')) as Record<
      string,
      string
    >;

    expect(Object.fromEntries(stackOf(routes))).toEqual(file);
  });

  it("stays where it is when a route is inserted before its area's entries, or the table is reordered", () => {
    const before = stackOf(routes);
    const counts = new Map<string, number>();
    for (const route of routes) counts.set(areaOf(route.path), (counts.get(areaOf(route.path)) ?? 0) + 1);
    const largestArea = [...counts].sort(([, a], [, b]) => b - a)[0][0];
    const inserted = [extra(largestArea, 'inserted-first'), ...routes];
    const reversed = [...routes].reverse();

    for (const table of [inserted, reversed]) {
      const after = stackOf(table);
      expect([...before].filter(([path, stack]) => after.get(path) !== stack)).toEqual([]);
    }
  });

  it("puts a route not recorded yet in its area's last nested stack with room, then in a new one", () => {
    const recorded = { '/v2/users/a': 'UsersRoutes', '/v2/users/b': 'UsersRoutes2' };
    const table = [
      extra('users', 'c'),
      extra('users', 'a'),
      extra('users', 'b'),
      extra('users', 'd'),
      extra('users', 'e'),
    ];

    const groups = groupRoutes(table, 2, recorded).map((group) => [group.id, group.routes.map((route) => route.path)]);

    expect(groups).toEqual([
      ['UsersRoutes', ['/v2/users/a']],
      ['UsersRoutes2', ['/v2/users/b', '/v2/users/c']],
      ['UsersRoutes3', ['/v2/users/d', '/v2/users/e']],
    ]);
  });

  it('refuses a recorded stack of another area, and one over its size', () => {
    expect(() => groupRoutes([extra('users', 'a')], 2, { '/v2/users/a': 'CrdtRoutes' })).toThrow(
      'not a nested stack of the users area',
    );
    const full = { '/v2/users/a': 'UsersRoutes', '/v2/users/b': 'UsersRoutes', '/v2/users/c': 'UsersRoutes' };
    expect(() => groupRoutes([extra('users', 'a'), extra('users', 'b'), extra('users', 'c')], 2, full)).toThrow(
      'more than 2',
    );
  });
});
