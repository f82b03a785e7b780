/**
 * Room to grow: CloudFormation refuses a stack of more than 500 resources. Route functions live in nested stacks by
 * area (infra/route-stack.ts), so every stack, the parent and each nested one, has to stay under 400 today and under
 * 300 (60 % of the limit) with 40 more routes than today, wherever they are added.
 */
import { FUNCTIONS_PER_FAULT_ALARM } from '../../../infra/alarms';
import { ROUTES_PER_STACK, groupRoutes } from '../../../infra/route-stack';
import { routes } from '../../../shared/routes';
import { type Deployment, extraRoutes, synthesize } from '../templates';

const FAIL_ABOVE = 400;
const GROWTH_LIMIT = 300;
const MORE_ROUTES = 40;

/**
 * The grouping rule of infra/route-stack.ts, written out here rather than called, so that the expectations below do
 * not come from the code they check: the area is the path's segment after the version, and an area's first nested
 * stack is named after it (`/v2/workspace/create` → `workspace`, `WorkspaceRoutes`).
 */
const areaOf = (path: string): string => path.split('/')[2];
const stackNameOf = (area: string): string => `${area.charAt(0).toUpperCase()}${area.slice(1)}Routes`;

const areas = [...new Set(routes.map((route) => areaOf(route.path)))];
/** The area with the most routes: 40 more there is the worst case for one nested stack group. */
const largestArea = areas.reduce((largest, area) =>
  routes.filter((route) => areaOf(route.path) === area).length >
  routes.filter((route) => areaOf(route.path) === largest).length
    ? area
    : largest,
);

function counts(deployment: Deployment): Array<[string, number]> {
  return deployment.all.map((stack) => [stack.name, Object.keys(stack.resources).length]);
}

function functionsIn(deployment: Deployment, stackName: string): number {
  const stack = deployment.all.find((candidate) => candidate.name === stackName);
  return Object.values(stack?.resources ?? {}).filter((resource) => resource.Type === 'AWS::Lambda::Function').length;
}

/** The nested stack of the largest area's routes today: `WorkspaceRoutes`. */
const largestAreaStack = stackNameOf(largestArea);
const largestAreaRoutes = routes.filter((route) => areaOf(route.path) === largestArea).length;

const today = synthesize();
const oneArea = synthesize({ routes: [...routes, ...extraRoutes(MORE_ROUTES, [largestArea])] });
const spread = synthesize({ routes: [...routes, ...extraRoutes(MORE_ROUTES, areas)] });

console.log(
  [
    `Resources per stack (CloudFormation's limit is 500; routes today: ${routes.length})`,
    ...today.all.map((stack, i) => `  ${stack.name.padEnd(24)} ${String(counts(today)[i][1]).padStart(3)} today`),
    `With ${MORE_ROUTES} more routes, all in ${largestArea}:`,
    ...counts(oneArea).map(([name, count]) => `  ${name.padEnd(24)} ${String(count).padStart(3)}`),
    `With ${MORE_ROUTES} more routes spread over every area: largest stack ${Math.max(...counts(spread).map(([, count]) => count))}`,
  ].join('\n'),
);

describe('stack sizes', () => {
  it.each(counts(today))('%s has %i resources today (at most 400)', (_, count) => {
    expect(count).toBeLessThanOrEqual(FAIL_ABOVE);
  });

  it(`keeps every stack under ${GROWTH_LIMIT} resources with ${MORE_ROUTES} more routes in one area`, () => {
    expect(counts(oneArea).filter(([, count]) => count >= GROWTH_LIMIT)).toEqual([]);
  });

  it(`keeps every stack under ${GROWTH_LIMIT} resources with ${MORE_ROUTES} more routes spread over every area`, () => {
    expect(counts(spread).filter(([, count]) => count >= GROWTH_LIMIT)).toEqual([]);
  });

  it(`splits an area of more than ${ROUTES_PER_STACK} routes into nested stacks of ${ROUTES_PER_STACK}, keeping one function per path`, () => {
    const parts = (count: number) =>
      Array.from({ length: Math.ceil(count / ROUTES_PER_STACK) }, (_, i) =>
        Math.min(ROUTES_PER_STACK, count - i * ROUTES_PER_STACK),
      );
    const stackNames = (count: number) =>
      parts(count).map((_, i) => (i === 0 ? largestAreaStack : `${largestAreaStack}${i + 1}`));

    expect(
      groupRoutes(routes)
        .filter((group) => group.area === largestArea)
        .map((group) => group.routes.length),
    ).toEqual(parts(largestAreaRoutes));
    expect(stackNames(largestAreaRoutes + MORE_ROUTES).map((name) => functionsIn(oneArea, name))).toEqual(
      parts(largestAreaRoutes + MORE_ROUTES),
    );
  });

  it("costs 7 resources in its area's last nested stack (and an alarm every fifth route), none in the parent, to add one route", () => {
    const [added] = extraRoutes(1, [largestArea]);
    const grown = synthesize({ routes: [...routes, added] });
    const before = new Map(counts(today));
    const inLastPart = largestAreaRoutes % ROUTES_PER_STACK;
    const lastPart = Math.ceil(largestAreaRoutes / ROUTES_PER_STACK);
    const newAlarm = inLastPart % FUNCTIONS_PER_FAULT_ALARM === 0 ? 1 : 0;

    // A full last part would open a nested stack of its own (its fixed resources): not the case measured here.
    expect(inLastPart).toBeGreaterThan(0);
    expect(
      counts(grown)
        .map(([name, count]) => [name, count - (before.get(name) ?? 0)])
        .filter(([, delta]) => delta !== 0),
    ).toEqual([[lastPart === 1 ? largestAreaStack : `${largestAreaStack}${lastPart}`, 7 + newAlarm]]);
  });

  it("moves no existing route to another nested stack when a route is added after its area's entries", () => {
    const grown = [...routes, ...extraRoutes(MORE_ROUTES, [largestArea])];
    const stackOf = (table: typeof grown) =>
      new Map(groupRoutes(table).flatMap((group) => group.routes.map((route) => [route.path, group.id])));
    const before = stackOf(grown);
    const after = stackOf([
      ...grown,
      ...extraRoutes(1, [largestArea]).map((route) => ({ ...route, path: `${route.path}-appended` })),
    ]);

    expect([...before].filter(([path, stack]) => after.get(path) !== stack)).toEqual([]);
  });
});
