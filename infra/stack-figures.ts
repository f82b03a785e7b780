/**
 * The figures the docs give about the synthesized stacks (resources per stack, functions, alarms, reserved
 * concurrency, the fixed monthly cost), computed from the CloudFormation templates and rendered as one Markdown block.
 * `npm run stack-figures` prints the block (bin/stack-figures.ts), `-- --write` puts it between the markers in the
 * docs, and an infra test fails when the docs' copy differs from the templates, so no figure is typed by hand.
 *
 * The unit prices are written here once, and every resource type the templates hold must have a price class below:
 * a new kind of resource with a charge at rest cannot slip past the cost figure.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}

/** One synthesized template: `name` is the construct id of a nested stack; the parent is always first. */
export interface SynthesizedStack {
  readonly name: string;
  readonly resources: Record<string, TemplateResource>;
}

/** CloudFormation's hard limit of resources per stack (nested stacks count on their own). */
export const CLOUDFORMATION_RESOURCE_LIMIT = 500;
/** Lambda keeps this much of an account's concurrency quota unreserved; reservations cannot eat into it. */
export const LAMBDA_UNRESERVED_MINIMUM = 100;

/** The region whose list prices these are (AWS's pricing pages; most regions charge the same for these items). */
export const PRICE_REGION = 'us-east-1';

/** The monthly list prices (USD) of what is billed whether or not the deployment serves a request. */
const FIXED_PRICES = {
  /** CloudWatch standard-resolution alarm, per alarm metric: a metric-math alarm bills every metric it lists. */
  alarmMetric: 0.1,
  /** KMS customer managed key; each of its first two yearly rotations adds as much again (so at most 3×). */
  kmsKey: 1,
} as const;
/** The first alarm metrics of an account are free (CloudWatch free tier), shared with every other alarm there. */
const FREE_ALARM_METRICS = 10;

/** Billed by the data they hold: zero when empty, so not part of the fixed cost. */
const STORAGE_PRICES: Record<string, string> = {
  'AWS::DynamoDB::Table':
    '$0.25 per GB-month stored (first 25 GB free), plus $0.20 per GB-month for point-in-time recovery',
  'AWS::Logs::LogGroup': '$0.03 per GB-month stored (compressed), for as long as the retention keeps it',
};

/** Billed per request, invocation or message only: nothing at rest. */
const PER_USE_TYPES = new Set([
  // An account setting (the logging role API Gateway uses): free; the logs it writes are the log groups'.
  'AWS::ApiGateway::Account',
  'AWS::ApiGatewayV2::Api',
  'AWS::ApiGatewayV2::Integration',
  'AWS::ApiGatewayV2::Route',
  'AWS::ApiGatewayV2::Stage',
  'AWS::CDK::Metadata',
  'AWS::CloudFormation::Stack',
  // A scheduled rule: the invocations it makes are the function's (EventBridge does not bill scheduled rules).
  'AWS::Events::Rule',
  'AWS::IAM::Policy',
  'AWS::IAM::Role',
  'AWS::KMS::Alias',
  'AWS::Lambda::EventSourceMapping',
  'AWS::Lambda::Function',
  'AWS::Lambda::Permission',
  // Free itself; the custom metric it publishes bills by the hour only in hours that it publishes (a dead letter).
  'AWS::Logs::MetricFilter',
  'AWS::SQS::Queue',
  'AWS::SQS::QueuePolicy',
]);
/** A custom resource is a call to a function at deploy time. */
const isCustomResource = (type: string): boolean =>
  type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource';

export interface StackCount {
  readonly name: string;
  readonly resources: number;
  readonly functions: number;
  readonly alarms: number;
}

export interface Reservation {
  /** `POST /v2/rewriter/ask-ai`, `stream worker`, ... */
  readonly label: string;
  readonly concurrency: number;
}

export interface StackFigures {
  readonly stacks: readonly StackCount[];
  readonly functions: {
    readonly route: number;
    readonly socket: number;
    readonly streamWorker: number;
    readonly queueWorker: number;
    readonly scheduledWorker: number;
    readonly other: number;
  };
  readonly alarms: number;
  readonly alarmMetrics: number;
  /** The alarms and their metrics by the namespace they watch (AWS/Lambda, AWS/DynamoDB, the live metrics' own, ...). */
  readonly alarmsByNamespace: ReadonlyArray<{
    readonly namespace: string;
    readonly alarms: number;
    readonly metrics: number;
  }>;
  readonly kmsKeys: number;
  /** Resources per route in its nested stack (the resource types there that come once per function). */
  readonly perRoute: { readonly resources: number; readonly types: readonly string[]; readonly alarmMetrics: number };
  /** Reserved concurrency of the default synthesis: none expected. */
  readonly reservedByDefault: readonly Reservation[];
  /** Reserved concurrency with `-c reserveConcurrency=true`. */
  readonly reservedOptIn: readonly Reservation[];
  readonly storageTypes: ReadonlyArray<{ readonly type: string; readonly count: number }>;
}

type FunctionKind = 'route' | 'socket' | 'streamWorker' | 'queueWorker' | 'scheduledWorker' | 'other';

const resourcesOf = (stack: SynthesizedStack, type: string): Array<[string, TemplateResource]> =>
  Object.entries(stack.resources).filter(([, resource]) => resource.Type === type);

/**
 * A route function is described `POST <path>`, a live-sync function `WebSocket <route key>`; a worker is the target of
 * an event source mapping (stream or queue) or of a scheduled rule.
 */
function functionKinds(stack: SynthesizedStack): Map<string, FunctionKind> {
  const mapped = new Map<string, FunctionKind>();
  for (const [, mapping] of resourcesOf(stack, 'AWS::Lambda::EventSourceMapping')) {
    const target = (mapping.Properties?.FunctionName as { Ref?: string } | undefined)?.Ref;
    // Stream sources need a starting position; SQS sources have none.
    if (target !== undefined)
      mapped.set(target, mapping.Properties?.StartingPosition === undefined ? 'queueWorker' : 'streamWorker');
  }
  for (const [, rule] of resourcesOf(stack, 'AWS::Events::Rule')) {
    if (rule.Properties?.ScheduleExpression === undefined) continue;
    for (const target of (rule.Properties.Targets as
      Array<{ Arn?: { 'Fn::GetAtt'?: [string, string] } }> | undefined) ?? []) {
      const id = target.Arn?.['Fn::GetAtt']?.[0];
      if (id !== undefined) mapped.set(id, 'scheduledWorker');
    }
  }
  return new Map(
    resourcesOf(stack, 'AWS::Lambda::Function').map(([id, fn]) => {
      const description = String(fn.Properties?.Description ?? '');
      return [
        id,
        description.startsWith('POST /')
          ? 'route'
          : description.startsWith('WebSocket $')
            ? 'socket'
            : (mapped.get(id) ?? 'other'),
      ];
    }),
  );
}

/** The namespace an alarm's metrics are in (the first one's, should a metric-math alarm mix them). */
function namespaceOf(alarm: TemplateResource): string {
  const queries = alarm.Properties?.Metrics as Array<{ MetricStat?: { Metric?: { Namespace?: unknown } } }> | undefined;
  const namespace =
    queries === undefined
      ? alarm.Properties?.Namespace
      : queries.find((query) => query.MetricStat !== undefined)?.MetricStat?.Metric?.Namespace;
  return typeof namespace === 'string' ? namespace : JSON.stringify(namespace);
}

function alarmsByNamespaceOf(alarms: ReadonlyArray<[string, TemplateResource]>): StackFigures['alarmsByNamespace'] {
  const groups = new Map<string, { namespace: string; alarms: number; metrics: number }>();
  for (const [, alarm] of alarms) {
    const namespace = namespaceOf(alarm);
    const group = groups.get(namespace) ?? { namespace, alarms: 0, metrics: 0 };
    groups.set(namespace, { namespace, alarms: group.alarms + 1, metrics: group.metrics + alarmMetricsOf(alarm) });
  }
  return [...groups.values()].sort((a, b) => b.metrics - a.metrics || a.namespace.localeCompare(b.namespace));
}

/** What an alarm bills: one metric, or every metric a metric-math alarm lists. */
function alarmMetricsOf(alarm: TemplateResource): number {
  const queries = alarm.Properties?.Metrics as Array<{ MetricStat?: unknown }> | undefined;
  return queries === undefined ? 1 : queries.filter((query) => query.MetricStat !== undefined).length;
}

function reservationsOf(stacks: readonly SynthesizedStack[]): Reservation[] {
  return stacks.flatMap((stack) => {
    const kinds = functionKinds(stack);
    return resourcesOf(stack, 'AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties?.ReservedConcurrentExecutions !== undefined)
      .map(([id, fn]) => {
        const kind = kinds.get(id);
        const label =
          kind === 'route'
            ? String(fn.Properties?.Description)
            : kind === 'streamWorker'
              ? 'stream worker'
              : kind === 'queueWorker'
                ? 'queue worker'
                : `function ${id}`;
        return { label, concurrency: Number(fn.Properties?.ReservedConcurrentExecutions) };
      });
  });
}

/**
 * The Lambda metrics an alarm lists: what grows with the functions (a stack's other alarms, such as the live path's
 * on its own metrics, are there once whatever the number of functions).
 */
function functionAlarmMetricsOf(alarm: TemplateResource): number {
  const queries = alarm.Properties?.Metrics as Array<{ MetricStat?: { Metric?: { Namespace?: unknown } } }> | undefined;
  if (queries === undefined) return alarm.Properties?.Namespace === 'AWS/Lambda' ? 1 : 0;
  return queries.filter((query) => query.MetricStat?.Metric?.Namespace === 'AWS/Lambda').length;
}

/** The resource types that a nested stack of routes holds once per function: what one more route costs. */
function perRouteOf(nested: readonly SynthesizedStack[]): StackFigures['perRoute'] {
  const routeStacks = nested.filter((stack) => resourcesOf(stack, 'AWS::Lambda::Function').length > 0);
  if (routeStacks.length === 0) throw new Error('No nested stack holds a function: cannot tell what a route costs.');
  const typesOnce = (stack: SynthesizedStack): string[] => {
    const functions = resourcesOf(stack, 'AWS::Lambda::Function').length;
    const counts = new Map<string, number>();
    for (const resource of Object.values(stack.resources))
      counts.set(resource.Type, (counts.get(resource.Type) ?? 0) + 1);
    return [...counts]
      .filter(([, count]) => count === functions)
      .map(([type]) => type)
      .sort();
  };
  // In a stack of one route every type comes once; take the types common to every stack of routes.
  const types = routeStacks.map(typesOnce).reduce((common, next) => common.filter((type) => next.includes(type)));
  const functions = routeStacks.reduce((sum, stack) => sum + resourcesOf(stack, 'AWS::Lambda::Function').length, 0);
  const metrics = routeStacks.reduce(
    (sum, stack) =>
      sum + resourcesOf(stack, 'AWS::CloudWatch::Alarm').reduce((n, [, alarm]) => n + functionAlarmMetricsOf(alarm), 0),
    0,
  );
  if (metrics % functions !== 0)
    throw new Error(
      `The route stacks' ${metrics} alarm metrics are not a whole number per route (${functions} routes).`,
    );
  return { resources: types.length, types, alarmMetrics: metrics / functions };
}

/**
 * The figures of a deployment. `defaults` is the synthesis with the default context, `optIn` the one with
 * `reserveConcurrency=true`; each lists the parent stack first, then every nested stack. Throws on a resource type with
 * no price class.
 */
export function stackFigures(defaults: readonly SynthesizedStack[], optIn: readonly SynthesizedStack[]): StackFigures {
  const all = (type: string) => defaults.flatMap((stack) => resourcesOf(stack, type));
  const unpriced = [
    ...new Set(defaults.flatMap((stack) => Object.values(stack.resources).map((resource) => resource.Type))),
  ].filter(
    (type) =>
      !PER_USE_TYPES.has(type) &&
      !(type in STORAGE_PRICES) &&
      !isCustomResource(type) &&
      type !== 'AWS::CloudWatch::Alarm' &&
      type !== 'AWS::KMS::Key',
  );
  if (unpriced.length > 0) {
    throw new Error(
      `infra/stack-figures.ts has no price class for ${unpriced.join(', ')}: add each to the fixed, storage or per-use prices.`,
    );
  }
  const functions = { route: 0, socket: 0, streamWorker: 0, queueWorker: 0, scheduledWorker: 0, other: 0 };
  for (const stack of defaults) for (const kind of functionKinds(stack).values()) functions[kind] += 1;
  return {
    stacks: defaults.map((stack, i) => ({
      name: i === 0 ? 'parent' : stack.name,
      resources: Object.keys(stack.resources).length,
      functions: resourcesOf(stack, 'AWS::Lambda::Function').length,
      alarms: resourcesOf(stack, 'AWS::CloudWatch::Alarm').length,
    })),
    functions,
    alarms: all('AWS::CloudWatch::Alarm').length,
    alarmMetrics: all('AWS::CloudWatch::Alarm').reduce((sum, [, alarm]) => sum + alarmMetricsOf(alarm), 0),
    alarmsByNamespace: alarmsByNamespaceOf(all('AWS::CloudWatch::Alarm')),
    kmsKeys: all('AWS::KMS::Key').length,
    perRoute: perRouteOf(defaults.slice(1)),
    reservedByDefault: reservationsOf(defaults),
    reservedOptIn: reservationsOf(optIn),
    storageTypes: Object.keys(STORAGE_PRICES).map((type) => ({ type, count: all(type).length })),
  };
}

const usd = (amount: number): string => `$${amount.toFixed(2)}`;
const total = (reservations: readonly Reservation[]): number =>
  reservations.reduce((sum, reservation) => sum + reservation.concurrency, 0);

/** `POST /v2/rewriter/ask-ai` 20, 3 stream workers × 5 */
function describeReservations(reservations: readonly Reservation[]): string {
  const groups = new Map<string, { label: string; concurrency: number; count: number }>();
  for (const reservation of reservations) {
    const key = `${reservation.label} ${reservation.concurrency}`;
    const group = groups.get(key) ?? { ...reservation, count: 0 };
    groups.set(key, { ...group, count: group.count + 1 });
  }
  // Routes first (by path), then the workers.
  return [...groups.values()]
    .sort(
      (a, b) =>
        Number(!a.label.startsWith('POST /')) - Number(!b.label.startsWith('POST /')) || a.label.localeCompare(b.label),
    )
    .map((group) => {
      const label = group.label.startsWith('POST /') ? `\`${group.label}\`` : group.label;
      return group.count === 1 ? `${label} ${group.concurrency}` : `${group.count} ${label}s × ${group.concurrency}`;
    })
    .join(', ');
}

/** The generated page of figures, from the project root: written whole, never read by the code that writes it. */
export const FIGURES_FILE = 'docs/stack-figures.md';
/** The command that rewrites it. */
export const REFRESH_COMMAND = 'npm run stack-figures -- --write';

/** The page of figures (FIGURES_FILE) as Markdown. */
export function renderFigures(figures: StackFigures): string {
  const sum = (pick: (stack: StackCount) => number) => figures.stacks.reduce((n, stack) => n + pick(stack), 0);
  const largest = figures.stacks.reduce((max, stack) => (stack.resources > max.resources ? stack : max));
  const functionCount = sum((stack) => stack.functions);
  const { route, socket, streamWorker, queueWorker, scheduledWorker, other } = figures.functions;
  const alarmCost = figures.alarmMetrics * FIXED_PRICES.alarmMetric;
  const keyCost = figures.kmsKeys * FIXED_PRICES.kmsKey;
  const reservedTotal = total(figures.reservedOptIn);
  const lines = [
    '# Stack figures',
    '',
    `<!-- Generated from the synthesized templates by \`${REFRESH_COMMAND}\` (bin/stack-figures.ts); an infra test fails when it is out of date. Do not edit by hand. -->`,
    '',
    `Counted from the synthesized templates, priced with the unit prices in \`infra/stack-figures.ts\`; what they mean for a deployment is in [operating.md](operating.md#deploy).`,
    '',
    `**Stacks** (default context; CloudFormation allows ${CLOUDFORMATION_RESOURCE_LIMIT} resources per stack, nested stacks each their own):`,
    '',
    '| Stack | Resources | Functions | Alarms |',
    '|---|--:|--:|--:|',
    ...figures.stacks.map((stack) => `| ${stack.name} | ${stack.resources} | ${stack.functions} | ${stack.alarms} |`),
    `| all ${figures.stacks.length} stacks | ${sum((stack) => stack.resources)} | ${functionCount} | ${sum((stack) => stack.alarms)} |`,
    '',
    `- Largest stack: ${largest.name}, ${largest.resources} resources (${Math.round((100 * largest.resources) / CLOUDFORMATION_RESOURCE_LIMIT)} % of the limit).`,
    `- Functions: ${functionCount}: ${route} route functions (one per POST path), ${socket} live-sync functions (one per WebSocket route key), ${streamWorker + queueWorker + scheduledWorker} workers (${streamWorker} on the table's stream, ${queueWorker} on a queue, ${scheduledWorker} on a schedule), ${other} other (the \`$default\` route's, deploy tasks and their providers).`,
    `- Alarms: ${figures.alarms}, listing ${figures.alarmMetrics} alarm metrics; by the namespace they watch: ${figures.alarmsByNamespace.map((group) => `${group.namespace} ${group.alarms} (${group.metrics} metrics)`).join(', ')}. What each watches and why its threshold: [operating.md](operating.md#deploy), "Alarms"; the live metrics (the namespace \`collab-backend/<stage>\`): [operating.md](operating.md#deploy), "Metrics".`,
    `- One more route: ${figures.perRoute.resources} resources in its area's nested stack (${figures.perRoute.types.map((type) => type.replace(/^AWS::/, '')).join(', ')}) and ${figures.perRoute.alarmMetrics} alarm metrics, ${usd(figures.perRoute.alarmMetrics * FIXED_PRICES.alarmMetric)} a month.`,
    `- Reserved concurrency: ${figures.reservedByDefault.length === 0 ? 'none by default' : `${total(figures.reservedByDefault)} by default (${describeReservations(figures.reservedByDefault)})`}. With \`-c reserveConcurrency=true\`: ${reservedTotal} (${describeReservations(figures.reservedOptIn)}), so the account's Lambda concurrency quota must be at least ${reservedTotal + LAMBDA_UNRESERVED_MINIMUM} (Lambda keeps ${LAMBDA_UNRESERVED_MINIMUM} unreserved).`,
    '',
    `**Fixed monthly cost** (${PRICE_REGION} list prices, no traffic):`,
    '',
    '| What | Count | Unit price | Per month |',
    '|---|--:|---|--:|',
    `| CloudWatch alarm metrics (standard resolution) | ${figures.alarmMetrics} | ${usd(FIXED_PRICES.alarmMetric)} per alarm metric; the account's first ${FREE_ALARM_METRICS} are free | ${usd(alarmCost)} |`,
    `| KMS keys | ${figures.kmsKeys} | ${usd(FIXED_PRICES.kmsKey)} per key; each of its first two yearly rotations adds ${usd(FIXED_PRICES.kmsKey)} | ${usd(keyCost)} |`,
    `| **Total** | | | **${usd(alarmCost + keyCost)}** |`,
    '',
    `Billed by the data they hold (nothing when empty): ${figures.storageTypes.map(({ type, count }) => `${count} × ${type.replace(/^AWS::/, '')}, ${STORAGE_PRICES[type]}`).join('; ')}. Every other resource of the templates is billed per use only.`,
  ];
  return `${lines.join('\n')}\n`;
}

const PROJECT_ROOT = resolve(__dirname, '..');

/** Writes the page of figures (FIGURES_FILE); returns whether it changed. */
export function writeFigures(page: string): boolean {
  const path = join(PROJECT_ROOT, FIGURES_FILE);
  const unchanged = existsSync(path) && readFileSync(path, 'utf8') === page;
  if (!unchanged) writeFileSync(path, page);
  return !unchanged;
}
