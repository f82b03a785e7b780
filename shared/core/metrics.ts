/**
 * The live path's CloudWatch metrics (issue 30 item 6): their names, the process's one Powertools `Metrics` (built
 * once, here), and the scope they are counted in. Powertools writes them to stdout in CloudWatch's embedded metric
 * format (EMF), which Lambda's log stream turns into metrics: no PutMetricData call, client or grant.
 *
 * The names are also what infra/alarms.ts alarms on (read from here, so that a renamed metric cannot leave an alarm
 * watching nothing). Counted per invocation, flushed once per invocation: `withLiveMetrics` (shared/http/socket.ts, around each live
 * handler) opens a scope, the live code counts into it (`countLive`, `countRefusal`; outside a scope, e.g. a REST
 * write relaying to live connections or the revocation worker, a count is dropped), and when the handler ends the
 * scope's counts and its duration go to Powertools and are published in one EMF object, synchronously, so that
 * invocations running side by side in one process (the local stack) never mix their counts.
 *
 * Dimensions are low-cardinality only: `service` (Powertools' default) and `route` (the socket route key) on every
 * metric, and `reason` (a RefusalReason, never a reason's text) on LiveRefusals; never a connection, tenant, user or
 * document id. The namespace is POWERTOOLS_METRICS_NAMESPACE (the CDK sets `collab-backend/<stage>` on the live
 * functions, infra/service-function.ts). POWERTOOLS_METRICS_DISABLED=true (the local stack and the tests set it,
 * as they quiet the logger) counts and flushes as usual but writes nothing.
 *
 * What of Powertools is left aside, and why: its middy middleware and `logMetrics` decorator flush the instance's one
 * store, which concurrent invocations in one process would share (the scope above keeps them apart; socket.ts is not
 * a middy stack either); `throwOnEmptyMetrics` has nothing to guard, since every invocation writes its duration and
 * counts (an empty flush would only log Powertools' warning); the cold-start metric would repeat what Lambda's REPORT
 * lines already say (Init Duration), at the price of one more custom metric per function.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/** The names of the live path's metrics (docs/operating.md "Metrics" says what each counts). */
export const LIVE_METRICS = {
  /** Frames received from clients: one per `$default` invocation. */
  framesIn: 'LiveFramesIn',
  /** Frames posted to connections (successful PostToConnection calls): what API Gateway bills as messages out. */
  posts: 'LivePosts',
  /** Connections a post found gone (GoneException): closed and never posted to again. */
  goneConnections: 'LiveGoneConnections',
  /** Connections the service refused or closed with a reason, by RefusalReason (dimension `reason`). */
  refusals: 'LiveRefusals',
  /** Invocations that failed (a message the service failed to handle, a timeout, a failed relay): Lambda errors. */
  failures: 'LiveFailures',
  /** Connections a relay could not reach for another reason than their being gone: closed so that they resync. */
  relayFailures: 'LiveRelayFailures',
  /** How long one live invocation took, in milliseconds. */
  handlerTime: 'LiveHandlerTime',
} as const;

/** The metrics counted with countLive: every one but LiveRefusals (by reason) and LiveHandlerTime (a duration). */
export type LiveCount = (typeof LIVE_METRICS)['framesIn' | 'posts' | 'goneConnections' | 'failures' | 'relayFailures'];
const COUNTS: readonly LiveCount[] = [
  LIVE_METRICS.framesIn,
  LIVE_METRICS.posts,
  LIVE_METRICS.goneConnections,
  LIVE_METRICS.failures,
  LIVE_METRICS.relayFailures,
];

/**
 * Why the service refused or closed a connection, as a class (the `reason` dimension): `encoding` (binary frames
 * where API Gateway refuses them), `token` (missing, bad or expired), `room` (the token is for another room),
 * `migration`, `access` (no access, at connect or lost since), `editor` (not found), `room-full`, `too-large`,
 * `malformed` (a frame that is not a protocol message), `rate` (past its frame budget).
 */
export type RefusalReason =
  'encoding' | 'token' | 'room' | 'migration' | 'access' | 'editor' | 'room-full' | 'too-large' | 'malformed' | 'rate';

/** The dimension names. */
export const LIVE_DIMENSIONS = { route: 'route', reason: 'reason' } as const;

let built: Metrics | undefined;

/**
 * The process's one Metrics, built at the first publish (not when this module loads, so that infra/alarms.ts reads
 * the names above without building one): the service dimension as the logger has it, the namespace as the CDK sets it.
 */
function metrics(): Metrics {
  built ??= new Metrics({
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'collab-backend',
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'collab-backend',
  });
  return built;
}

interface Scope {
  readonly counts: Map<LiveCount, number>;
  readonly refusals: Map<RefusalReason, number>;
}

const scopes = new AsyncLocalStorage<Scope>();

/** Adds `value` to a count of the current live invocation; nothing outside one. */
export function countLive(metric: LiveCount, value = 1): void {
  const scope = scopes.getStore();
  if (scope === undefined || value === 0) return;
  scope.counts.set(metric, (scope.counts.get(metric) ?? 0) + value);
}

/** Counts a refused or closed connection of the current live invocation, by reason class; nothing outside one. */
export function countRefusal(reason: RefusalReason): void {
  const scope = scopes.getStore();
  if (scope === undefined) return;
  scope.refusals.set(reason, (scope.refusals.get(reason) ?? 0) + 1);
}

/**
 * Runs one live invocation of `route` in a scope of its own and publishes what it counted, and how long it took,
 * when it ends, failed or not (its error is rethrown). Every count is published, zeros included, so that a quiet
 * period shows 0 rather than no data; LiveRefusals only for the reasons that occurred.
 */
export async function withLiveMetrics<T>(route: string, work: () => Promise<T>): Promise<T> {
  const scope: Scope = { counts: new Map(), refusals: new Map() };
  const started = performance.now();
  try {
    return await scopes.run(scope, work);
  } finally {
    publish(route, scope, performance.now() - started);
  }
}

/** One EMF object for the counts and the duration; one more per refusal reason (its own dimension set). */
function publish(route: string, scope: Scope, milliseconds: number): void {
  const instance = metrics();
  for (const name of COUNTS) instance.addMetric(name, MetricUnit.Count, scope.counts.get(name) ?? 0);
  instance.addMetric(LIVE_METRICS.handlerTime, MetricUnit.Milliseconds, Math.round(milliseconds));
  instance.addDimension(LIVE_DIMENSIONS.route, route);
  instance.publishStoredMetrics();
  for (const [reason, count] of scope.refusals) {
    // A dimension applies to every metric of an EMF object: a refusal's reason goes in an object of its own.
    const single = instance.singleMetric();
    single.addDimension(LIVE_DIMENSIONS.route, route);
    single.addDimension(LIVE_DIMENSIONS.reason, reason);
    single.addMetric(LIVE_METRICS.refusals, MetricUnit.Count, count);
  }
}
