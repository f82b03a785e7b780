/**
 * Route functions live in nested stacks, grouped by area, so that no stack comes near CloudFormation's limit of 500
 * resources as routes are added. Each route costs 7 resources (function, role, policy, log group, route,
 * integration, permission), all in its area's nested stack; the parent holds the shared pieces (table, key, API,
 * stage, workers, deploy tasks) and one resource per nested stack.
 *
 * Grouping rule: the area is the path's first segment after the version (`/v2/organizations/documents/get` →
 * organizations). An area with more than ROUTES_PER_STACK routes is split, in route-table order, into nested stacks
 * of ROUTES_PER_STACK routes each. Because the split follows table order, a route added after its area's existing
 * entries moves no other route; one inserted before them shifts the later ones into the next nested stack, and
 * API Gateway refuses to create a route key that the old nested stack still holds until its cleanup (the deployment
 * fails and rolls back). Add routes after their area's existing entries.
 */
import { NestedStack, Validations } from 'aws-cdk-lib';
import { type HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { Construct } from 'constructs';
import { routeId, type Route } from '../shared/routes';
import { functionFaultAlarms } from './alarms';
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

/** The routes' nested stacks: one per area, split in table order every `routesPerStack` routes. */
export function groupRoutes(routes: readonly Route[], routesPerStack = ROUTES_PER_STACK): RouteGroup[] {
  const byArea = new Map<string, Route[]>();
  for (const route of routes) {
    const area = areaOf(route.path);
    byArea.set(area, [...(byArea.get(area) ?? []), route]);
  }
  const groups: RouteGroup[] = [];
  for (const [area, areaRoutes] of byArea) {
    const base = `${routeId(`/${area}`)}Routes`;
    for (let start = 0; start < areaRoutes.length; start += routesPerStack) {
      const part = start / routesPerStack + 1;
      groups.push({ id: part === 1 ? base : `${base}${part}`, area, part, routes: areaRoutes.slice(start, start + routesPerStack) });
    }
  }
  return groups;
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
    super(scope, group.id, { description: `Route functions of the ${group.area} area, part ${group.part}: ${group.routes.length} POST paths` });

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
