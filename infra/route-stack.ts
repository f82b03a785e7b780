/**
 * Route functions live in nested stacks, grouped by area, so that no stack comes near CloudFormation's limit of 500
 * resources as routes are added. Each route costs 7 resources (function, role, policy, log group, route,
 * integration, permission), all in its area's nested stack; the parent holds the shared pieces (table, key, API,
 * stage, workers, deploy tasks) and one resource per nested stack.
 *
 * Grouping rule: the area is the path's first segment after the version (`/v2/organizations/documents/get` →
 * organizations), and each area's routes fill nested stacks of at most ROUTES_PER_STACK. Which stack a deployed route
 * is in is recorded in infra/route-stacks.json and never derived from the table's order: a route that moved to
 * another nested stack would fail the deployment (API Gateway refuses to create a route key the old nested stack still
 * holds until its cleanup, and the update rolls back). A route not recorded yet goes to its area's last nested stack
 * with room, or a new one; `npm run route-stacks` records it, and test/infra/route-stacks.test.ts fails until it is.
 */
import { NestedStack, Validations } from 'aws-cdk-lib';
import { type HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Construct } from 'constructs';
import { routeId, type Route } from '../shared/routes';
import { functionFaultAlarms } from './alarms';
import recordedRouteStacks from './route-stacks.json';
import { routeLimits } from './limits';
import { ServiceFunction, type AiBaseUrls, type DataResources, type FunctionSettings } from './service-function';

/**
 * Routes per nested stack: 20 × 7 = 140 resources plus ceil(20 / 5) = 4 alarms, under half the 300 this project
 * allows a stack (60 % of CloudFormation's 500), so per-route resources can still double before the number changes.
 */
export const ROUTES_PER_STACK = 20;

/** Why no route has an API Gateway authorizer (cdk-nag APIG4). */
export const NO_AUTHORIZER_REASON =
  'Authentication is the API key + auth token (or workspace id + token) in the x-service-* headers, checked ' +
  'against the table by the shared middleware of every function with a 30 s cache; a Lambda authorizer would ' +
  'add a second invocation per request and a second place for the rules. Workspace create and the $default ' +
  '404/405 answer are public by the API contract.';

/** `/v2/organizations/documents/get` → `organizations`. */
export function areaOf(path: string): string {
  const area = path.split('/').filter(Boolean)[1];
  if (area === undefined) throw new Error(`Route ${path} has no area (expected /<version>/<area>/...).`);
  return area;
}

export interface RouteGroup {
  /** Construct id of the nested stack: `OrganizationsRoutes`, then `OrganizationsRoutes2`, ... */
  readonly id: string;
  readonly area: string;
  /** 1 for the area's first nested stack, 2 for the next, ... */
  readonly part: number;
  readonly routes: readonly Route[];
}

/** The nested stack of each deployed route, by path (see the module comment). */
export const RECORDED_ROUTE_STACKS: Readonly<Record<string, string>> = recordedRouteStacks;

/** The construct id of an area's nested stack `part`: `OrganizationsRoutes`, then `OrganizationsRoutes2`, ... */
const stackIdOf = (area: string, part: number) => `${routeId(`/${area}`)}Routes${part === 1 ? '' : part}`;

/** The part of `area` a nested stack id names (`CrdtRoutes` 1, `CrdtRoutes2` 2), or undefined when it is another's. */
function partOf(area: string, id: string): number | undefined {
  const base = stackIdOf(area, 1);
  if (id === base) return 1;
  const rest = id.startsWith(base) ? id.slice(base.length) : '';
  return /^(?:[2-9]|[1-9]\d+)$/.test(rest) ? Number(rest) : undefined;
}

/**
 * The routes' nested stacks: each recorded route in its recorded stack, whatever its place in the table; then each
 * route not recorded, in table order, in its area's last nested stack with room (fewer than `routesPerStack`), or a
 * new one. Throws for a recorded stack that is not its route's area's, or one over `routesPerStack`.
 */
export function groupRoutes(
  routes: readonly Route[],
  routesPerStack = ROUTES_PER_STACK,
  recorded: Readonly<Record<string, string>> = RECORDED_ROUTE_STACKS,
): RouteGroup[] {
  const byArea = new Map<string, Map<number, Route[]>>();
  const partsOf = (area: string) => {
    const parts = byArea.get(area) ?? new Map<number, Route[]>();
    byArea.set(area, parts);
    return parts;
  };
  const unrecorded: Route[] = [];
  for (const route of routes) {
    const area = areaOf(route.path);
    const parts = partsOf(area);
    const id = recorded[route.path];
    if (id === undefined) {
      unrecorded.push(route);
      continue;
    }
    const part = partOf(area, id);
    if (part === undefined)
      throw new Error(
        `infra/route-stacks.json puts ${route.path} in ${id}, which is not a nested stack of the ${area} area.`,
      );
    parts.set(part, [...(parts.get(part) ?? []), route]);
  }
  for (const route of unrecorded) {
    const parts = partsOf(areaOf(route.path));
    const last = Math.max(0, ...parts.keys());
    const part = last > 0 && (parts.get(last)?.length ?? 0) < routesPerStack ? last : last + 1;
    parts.set(part, [...(parts.get(part) ?? []), route]);
  }
  return [...byArea].flatMap(([area, parts]) =>
    [...parts]
      .sort(([a], [b]) => a - b)
      .map(([part, partRoutes]) => {
        if (partRoutes.length > routesPerStack)
          throw new Error(`${stackIdOf(area, part)} holds ${partRoutes.length} routes, more than ${routesPerStack}.`);
        return { id: stackIdOf(area, part), area, part, routes: partRoutes };
      }),
  );
}

export interface RouteStackProps {
  readonly group: RouteGroup;
  readonly api: HttpApi;
  readonly resources: DataResources;
  readonly settings: FunctionSettings;
  readonly workspaceCreateLimitPerHour: number;
  readonly aiBaseUrls: AiBaseUrls;
  /** Apply the reserved concurrency of infra/limits.ts (opt-in: it needs a Lambda quota of its total + 100). */
  readonly reserveConcurrency: boolean;
}

/** One group of routes: per route a function and its POST route on the parent's API, plus the group's alarms. */
export class RouteStack extends NestedStack {
  /** The function of each POST path of the group, by path. */
  readonly routeFunctions: ReadonlyMap<string, ServiceFunction>;

  constructor(scope: Construct, props: RouteStackProps) {
    const { group } = props;
    super(scope, group.id, {
      description: `Route functions of the ${group.area} area, part ${group.part}: ${group.routes.length} POST paths`,
    });

    // One function per POST path, even where paths share a handler file: each gets its own grants, logs,
    // concurrency and metrics.
    const routeFunctions = new Map<string, ServiceFunction>();
    for (const route of group.routes) {
      const id = routeId(route.path);
      const reservedConcurrency = props.reserveConcurrency ? routeLimits(route.path).reservedConcurrency : undefined;
      const routeFunction = new ServiceFunction(this, id, {
        kind: 'route',
        route,
        resources: props.resources,
        settings: props.settings,
        workspaceCreateLimitPerHour: props.workspaceCreateLimitPerHour,
        aiBaseUrls: props.aiBaseUrls,
        reservedConcurrency,
      });
      const httpRoute = new HttpRoute(this, `${id}Route`, {
        httpApi: props.api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod.POST),
        integration: new HttpLambdaIntegration(`${id}Integration`, routeFunction.function),
      });
      Validations.of(httpRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: NO_AUTHORIZER_REASON });
      routeFunctions.set(route.path, routeFunction);
    }
    this.routeFunctions = routeFunctions;

    functionFaultAlarms(this, [...routeFunctions.values()]);
  }
}
