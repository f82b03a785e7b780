/**
 * Every Lambda function of the service, of six kinds: a route, a WebSocket route of live sync, a stream worker, the
 * queue worker, a deploy task and the unrouted catch-all. One construct holds every function default (runtime, architecture, bundling, logs,
 * tracing) and turns an entry of the route, worker or deploy-task table into least-privilege grants: the function may
 * do what its entry declares (shared/grants.ts) and nothing more.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { DeployTask } from '../shared/deploy-tasks';
import { IDEMPOTENCY_KEY_PREFIX, NO_GRANTS, grantsFor, routeGrants, type Grants } from '../shared/grants';
import type { Route, SocketRoute } from '../shared/routes';
import { streamFiltersOf } from '../shared/db/item-change';
import {
  DEFAULT_STREAM_BATCH_SIZE,
  type QueueWorker,
  type ScheduledWorker,
  type StreamFilter,
  type StringMatch,
  type Worker,
} from '../shared/workers';
import { HANDLER, bundleRuntimeEnvironment, functionCode } from './bundling';
import { deadLetterQueue } from './dead-letters';
import {
  LIVE_SESSION_ROUTES,
  liveEndpoints,
  nagResourceName,
  type LiveApiReference,
  type LiveEndpoints,
} from './live-endpoints';
import type { SesSending } from './ses';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Settings every function gets. */
export interface FunctionSettings {
  /** Powertools service name, the `service` field of every log line. */
  readonly serviceName: string;
  readonly logLevel: LogLevel;
  /**
   * The CloudWatch namespace of the live path's metrics (shared/core/metrics.ts), one per stage so that two stages
   * in one account never add up: `collab-backend/<stage>` (metricsNamespace in infra/alarms.ts).
   */
  readonly metricsNamespace: string;
}

/**
 * Where Ask AI reaches each AI provider (a proxy, a regional or compatible endpoint). A provider left out keeps its
 * public endpoint (the default in shared/core/config.ts), and its variable is not set at all.
 */
export interface AiBaseUrls {
  readonly openai?: string;
  readonly anthropic?: string;
  readonly gemini?: string;
}

const AI_BASE_URL_VARIABLES: Record<keyof AiBaseUrls, string> = {
  openai: 'OPENAI_BASE_URL',
  anthropic: 'ANTHROPIC_BASE_URL',
  gemini: 'GEMINI_BASE_URL',
};

/** What a function may be granted access to; each gets only the parts its entry declares. */
export interface DataResources {
  readonly table: ITable;
  /** The key of the Encryption SDK's KMS keyring. */
  readonly encryptionKey: IKey;
  /** The delivery queue (shared/adapters/queue/queue.ts): webhook deliveries and CRDT emissions. */
  readonly deliveryQueue: sqs.IQueue;
  /** The operator's SES identity (and configuration set), infra/ses.ts; undefined when none is named. */
  readonly ses?: SesSending;
  /**
   * The live-sync WebSocket API (infra/live.ts): `execute-api:ManageConnections` on its stage's `@connections` paths
   * for the functions that declare `connections: 'manage'`.
   */
  readonly live: LiveApiReference;
}

interface CommonProps {
  readonly settings: FunctionSettings;
  /** Concurrent executions reserved for (and capping) the function; see infra/limits.ts. @default none */
  readonly reservedConcurrency?: number;
}

/** A function serving one route-table entry. */
export interface RoutedFunctionProps extends CommonProps {
  readonly kind: 'route';
  readonly route: Route;
  readonly resources: DataResources;
  /** Workspace creations allowed per source IP per hour (0 disables the limit); see shared/core/config.ts. */
  readonly workspaceCreateLimitPerHour: number;
  /** Passed to the functions whose route calls the AI providers, and to no other. */
  readonly aiBaseUrls?: AiBaseUrls;
}

/** A function serving one route key of the live-sync WebSocket API (shared/routes.ts `socketRoutes`). */
export interface SocketFunctionProps extends CommonProps {
  readonly kind: 'socket';
  readonly socketRoute: SocketRoute;
  readonly resources: DataResources;
}

/**
 * A worker of the worker table, woken by the table's stream: a filtered event source that reports failed records
 * one by one, and a dead-letter queue for records it gives up on.
 */
export interface WorkerFunctionProps extends CommonProps {
  readonly kind: 'worker';
  readonly worker: Worker;
  readonly resources: DataResources;
}

/**
 * The worker of the delivery queue: an SQS event source that reports failed jobs one by one; the queue's own
 * redrive policy moves a job that keeps failing to its dead-letter queue.
 */
export interface QueueWorkerFunctionProps extends CommonProps {
  readonly kind: 'queueWorker';
  readonly worker: QueueWorker;
  readonly resources: DataResources;
  /** WEBHOOK_ALLOW_PRIVATE_URLS (docs/decisions.md §11): false unless the operator opts in. */
  readonly webhookAllowPrivateUrls: boolean;
}

/** A worker run on a schedule (shared/workers.ts `scheduledWorkers`): an EventBridge rule invokes it (infra/stack.ts). */
export interface ScheduledWorkerFunctionProps extends CommonProps {
  readonly kind: 'scheduledWorker';
  readonly worker: ScheduledWorker;
  readonly resources: DataResources;
}

/** A deploy task (shared/deploy-tasks.ts): run by CloudFormation through a custom resource, see infra/deploy-task.ts. */
export interface DeployTaskFunctionProps extends CommonProps {
  readonly kind: 'deployTask';
  readonly task: DeployTask;
  readonly resources: DataResources;
}

/**
 * A function outside the tables (the `$default` catch-all): same defaults, no table, key or secret. It cannot be
 * handed resources, so it cannot be granted any by mistake.
 */
export interface UnroutedFunctionProps extends CommonProps {
  readonly kind: 'unrouted';
  /** Handler file relative to the project root; it exports `handler`. */
  readonly entry: string;
}

export type ServiceFunctionProps =
  | RoutedFunctionProps
  | SocketFunctionProps
  | WorkerFunctionProps
  | QueueWorkerFunctionProps
  | ScheduledWorkerFunctionProps
  | DeployTaskFunctionProps
  | UnroutedFunctionProps;

/**
 * 1024 MB: Lambda allocates CPU in proportion to memory. Cold starts (loading a bundle that carries the AWS SDK)
 * and the Encryption SDK and token hashing are CPU-bound, so below about 1 GB latency grows faster than the
 * per-millisecond price falls. Revisit with the bench script, not by guess.
 */
const MEMORY_MB = 1024;

/**
 * 29 s: API Gateway ends an HTTP API integration after 29-30 s (a WebSocket API's after 29 s), so a longer Lambda
 * timeout would only keep running work whose answer nobody receives. The slowest operation (ask-ai) needs about 25 s.
 */
const ROUTE_TIMEOUT = Duration.seconds(29);

/**
 * Workers get Lambda's longest run. A run saves its place a minute before the end and wakes a fresh invocation
 * through the stream, so no single invocation has to finish a large migration.
 */
const WORKER_TIMEOUT = Duration.minutes(15);

/**
 * A deploy task does a few conditional writes; a minute leaves room for the SDK's retries. A hung task then fails
 * the deployment after a minute instead of holding it for the Provider framework's 15.
 */
const DEPLOY_TASK_TIMEOUT = Duration.minutes(1);

/**
 * A batch of delivery jobs runs its attempts side by side, each bounded at 15 s (docs/decisions.md §11), plus the
 * reads and writes around them: a minute is ample. The queue's visibility timeout is six times this, as AWS
 * advises for SQS event sources.
 */
export const QUEUE_WORKER_TIMEOUT = Duration.minutes(1);

/**
 * Stream retries of a record the reader reported. A reader retries a consumer's failures itself and keeps what it
 * gives up on as dead letters in the table (shared/domain/stream/dispatch.ts), so it reports a record only when even
 * that write failed; after these retries the event source sends the record's shard and sequence range (not the
 * record: that is all an on-failure destination of a stream gets) to the dead-letter queue, which an alarm watches.
 */
const WORKER_RETRY_ATTEMPTS = 10;

/** A scheduled run is one pass of short reads and writes; it ends well before the next run (a minute later) starts. */
const SCHEDULED_WORKER_TIMEOUT = Duration.minutes(1);

/** Kept long enough to investigate an incident reported weeks later, short enough not to pile up cost. */
export const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;

/** What differs between the kinds of function; everything else is the same for all. */
interface Profile {
  readonly entry: string;
  /**
   * The function's and the role's description: `POST <path>` for routes, `WebSocket <route key>` for the live-sync
   * routes, the table's summary otherwise.
   */
  readonly description: string;
  readonly timeout: Duration;
  readonly grants: Grants;
  readonly resources?: DataResources;
}

function profileOf(props: ServiceFunctionProps): Profile {
  switch (props.kind) {
    case 'route':
      return {
        entry: props.route.entry,
        description: `POST ${props.route.path}`,
        timeout: ROUTE_TIMEOUT,
        grants: routeGrants(props.route),
        resources: props.resources,
      };
    case 'socket':
      return {
        entry: props.socketRoute.entry,
        description: `WebSocket ${props.socketRoute.routeKey}`,
        timeout: ROUTE_TIMEOUT,
        grants: grantsFor(props.socketRoute),
        resources: props.resources,
      };
    case 'worker':
      return {
        entry: props.worker.entry,
        description: props.worker.summary,
        timeout: WORKER_TIMEOUT,
        grants: grantsFor(props.worker),
        resources: props.resources,
      };
    case 'queueWorker':
      return {
        entry: props.worker.entry,
        description: props.worker.summary,
        timeout: QUEUE_WORKER_TIMEOUT,
        grants: grantsFor(props.worker),
        resources: props.resources,
      };
    case 'scheduledWorker':
      return {
        entry: props.worker.entry,
        description: props.worker.summary,
        timeout: SCHEDULED_WORKER_TIMEOUT,
        grants: grantsFor(props.worker),
        resources: props.resources,
      };
    case 'deployTask':
      return {
        entry: props.task.entry,
        description: props.task.summary,
        timeout: DEPLOY_TASK_TIMEOUT,
        grants: grantsFor(props.task),
        resources: props.resources,
      };
    case 'unrouted':
      return {
        entry: props.entry,
        description: `${props.entry} (requests that match no route)`,
        timeout: ROUTE_TIMEOUT,
        grants: NO_GRANTS,
      };
  }
}

export class ServiceFunction extends Construct {
  readonly function: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  /** `POST <path>` for routes, `WebSocket <route key>` for live sync, the table's summary otherwise; also the function's description. */
  readonly description: string;
  /** The worker's dead-letter queue; undefined for every other kind. */
  readonly deadLetters?: sqs.Queue;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const profile = profileOf(props);
    this.description = profile.description;

    // Created explicitly (not Lambda's implicit /aws/lambda/<name>) so that retention is part of the stack and
    // the function needs no logs:CreateLogGroup permission.
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: LOG_RETENTION });

    // An explicit role instead of the default one with the AWSLambdaBasicExecutionRole managed policy, which
    // may write to every log group in the account; this one may write to its own log group only.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: profile.description,
    });
    this.logGroup.grantWrite(this.role);

    this.function = new lambda.Function(this, 'Function', {
      code: functionCode(profile.entry),
      handler: HANDLER,
      description: profile.description,
      runtime: lambda.Runtime.NODEJS_22_X,
      // Graviton: about 20% cheaper per GB-second than x86, and the bundle is plain JavaScript.
      architecture: lambda.Architecture.ARM_64,
      memorySize: MEMORY_MB,
      timeout: profile.timeout,
      reservedConcurrentExecutions: props.reservedConcurrency,
      role: this.role,
      logGroup: this.logGroup,
      tracing: lambda.Tracing.ACTIVE,
      environment: {
        ...bundleRuntimeEnvironment,
        POWERTOOLS_SERVICE_NAME: props.settings.serviceName,
        LOG_LEVEL: props.settings.logLevel,
      },
    });

    if (profile.resources !== undefined) this.grantAccess(profile.grants, profile.resources);
    if (props.kind === 'route') {
      this.function.addEnvironment('WORKSPACE_CREATE_LIMIT_PER_HOUR', String(props.workspaceCreateLimitPerHour));
      if (props.route.calls?.includes('ai-providers')) this.pointAtAiProviders(props.aiBaseUrls ?? {});
      if (LIVE_SESSION_ROUTES.some((path) => path === props.route.path)) this.pointAtLiveApi(props.resources.live);
    }
    if (props.kind === 'socket') {
      // The live functions write the live metrics (embedded metric format on stdout, no grant needed); on explicitly,
      // whatever a default of Powertools' may become, since the alarms of infra/alarms.ts read them.
      this.function.addEnvironment('POWERTOOLS_METRICS_NAMESPACE', props.settings.metricsNamespace);
      this.function.addEnvironment('POWERTOOLS_METRICS_DISABLED', 'false');
    }
    if (props.kind === 'worker') {
      this.deadLetters = this.subscribeWorker(props.worker, props.resources.table);
    }
    if (props.kind === 'queueWorker') {
      this.function.addEnvironment('WEBHOOK_ALLOW_PRIVATE_URLS', String(props.webhookAllowPrivateUrls));
      // Each job fails or succeeds on its own; the queue's redrive policy decides when one is given up.
      this.function.addEventSource(
        new SqsEventSource(props.resources.deliveryQueue, { batchSize: 10, reportBatchItemFailures: true }),
      );
    }

    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'nodejs22.x is pinned on purpose: the bundles target node22 and the test suites run on that major version; ' +
        'moving to nodejs24.x is a deliberate upgrade that changes both together.',
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only actions that support no resource-level permissions, so "*" is the narrowest resource IAM accepts: ' +
        'the X-Ray statement of tracing ACTIVE (xray:PutTraceSegments, xray:PutTelemetryRecords) and, for stream ' +
        "workers, the event source's dynamodb:ListStreams.",
    });
  }

  /**
   * The one path from declared grants to IAM, for routes, workers and deploy tasks alike: table actions on the
   * table's ARN only, `dynamodb:Query` on each declared index by name (no `/index/*`), KMS actions on the one key,
   * SES sends on the one identity (and configuration set), ManageConnections on the live API's one stage. Explicit
   * statements instead of `grantReadData()` and friends, which add Scan, DescribeTable, stream reads and every index.
   */
  private grantAccess(grants: Grants, { table, encryptionKey, deliveryQueue, ses, live }: DataResources): void {
    if (grants.tableActions.length > 0) {
      this.function.addEnvironment('TABLE_NAME', table.tableName);
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: [...grants.tableActions], resources: [table.tableArn] }),
      );
    }
    if (grants.idempotencyActions.length > 0) {
      // Read-only routes record Idempotency-Key answers: writes only to items whose partition key starts with the
      // idempotency prefix (shared/grants.ts), enforced by IAM on the key itself.
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: [...grants.idempotencyActions],
          resources: [table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${IDEMPOTENCY_KEY_PREFIX}*`] } },
        }),
      );
    }
    if (grants.indexes.length > 0) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:Query'],
          resources: grants.indexes.map((index) => `${table.tableArn}/index/${index}`),
        }),
      );
    }
    if (grants.kmsActions.length > 0) {
      this.function.addEnvironment('KMS_KEY_ARN', encryptionKey.keyArn);
      // On the role rather than through key.grant(): the key lives in the parent stack, whose key policy already
      // delegates to IAM, so no key policy change (and no cross-stack edit) is needed.
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: [...grants.kmsActions], resources: [encryptionKey.keyArn] }),
      );
    }
    if (grants.queueActions.length > 0) {
      this.function.addEnvironment('DELIVERY_QUEUE_URL', deliveryQueue.queueUrl);
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: [...grants.queueActions], resources: [deliveryQueue.queueArn] }),
      );
    }
    // No identity named: no SES permission at all, and no SES_IDENTITY, so the worker fails emails with a reason.
    if (grants.sesActions.length > 0 && ses !== undefined) {
      this.function.addEnvironment('SES_IDENTITY', ses.identity);
      if (ses.configurationSet !== undefined)
        this.function.addEnvironment('SES_CONFIGURATION_SET', ses.configurationSet);
      if (ses.authorizingIdentityArn !== undefined)
        this.function.addEnvironment('SES_IDENTITY_ARN', ses.authorizingIdentityArn);
      // A send is authorized on the identity and, when one is used, on the configuration set: both are named, and
      // nothing else (no `identity/*`).
      const resources = [ses.identityArn, ...(ses.configurationSetArn === undefined ? [] : [ses.configurationSetArn])];
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...grants.sesActions], resources }));
    }
    if (grants.connectionActions.length > 0) {
      // PostToConnection, GetConnection and DeleteConnection on this API's stage: not `*/*` (every stage of the
      // API), not `*` (every WebSocket API of the account). Connection ids exist only at run time, hence `@connections/*`.
      const { connectionArns } = this.pointAtLiveApi(live);
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: [...grants.connectionActions], resources: [...connectionArns] }),
      );
      for (const arn of connectionArns) {
        Validations.of(this.role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${nagResourceName(this, arn)}]`,
          reason:
            "execute-api:ManageConnections on this stage's @connections/* of the live WebSocket API only: connection ids " +
            'exist only at run time, and IAM has no narrower resource for them.',
        });
      }
    }
  }

  /** LIVE_URL (what browsers connect to) and LIVE_CONNECTIONS_ENDPOINT (the Management API of the same stage). */
  private pointAtLiveApi(live: LiveApiReference): LiveEndpoints {
    const endpoints = liveEndpoints(this, live);
    this.function.addEnvironment('LIVE_URL', endpoints.url);
    this.function.addEnvironment('LIVE_CONNECTIONS_ENDPOINT', endpoints.connectionsEndpoint);
    return endpoints;
  }

  private subscribeWorker(worker: Worker, table: ITable): sqs.Queue {
    const deadLetters = deadLetterQueue(
      this,
      'DeadLetters',
      'This queue is itself the dead-letter queue of the stream worker: records the worker gave up on, kept for the operator.',
    );
    // The event source grants its own stream reads (ListStreams, DescribeStream, GetRecords, GetShardIterator on
    // the stream), separate from the data grants above.
    this.function.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: worker.batchSize ?? DEFAULT_STREAM_BATCH_SIZE,
        // One batch per shard at a time: a migration's records stay in order, and infra/limits.ts relies on it.
        parallelizationFactor: 1,
        retryAttempts: WORKER_RETRY_ATTEMPTS,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(deadLetters),
        // The union of its consumers' interests, computed where the decoder names the kinds (shared/db/item-change.ts).
        filters: streamFiltersOf(worker.consumers).map(filterCriteria),
      }),
    );
    return deadLetters;
  }

  private pointAtAiProviders(baseUrls: AiBaseUrls): void {
    for (const [provider, variable] of Object.entries(AI_BASE_URL_VARIABLES) as Array<[keyof AiBaseUrls, string]>) {
      const url = baseUrls[provider];
      if (url !== undefined) this.function.addEnvironment(variable, url);
    }
  }
}

/** A string test of shared/workers.ts as a Lambda filter rule on the attribute's `S` value (a list: one of them matching is enough). */
function stringRule(match: StringMatch): unknown[] {
  if ('exists' in match) return lambda.FilterRule.exists();
  if ('prefix' in match) return lambda.FilterRule.beginsWith(match.prefix);
  return lambda.FilterRule.or(...match.equals);
}

/** One pattern of a stream reader's filter as Lambda filter criteria. */
function filterCriteria(filter: StreamFilter): Record<string, unknown> {
  const newImage = Object.fromEntries(
    Object.entries(filter.newImage ?? {}).map(([name, match]) => [name, { S: stringRule(match) }]),
  );
  return lambda.FilterCriteria.filter({
    eventName: lambda.FilterRule.or(...filter.eventNames),
    dynamodb: {
      ...(filter.sortKey === undefined ? {} : { Keys: { sk: { S: filter.sortKey.flatMap(stringRule) } } }),
      ...(filter.newImage === undefined ? {} : { NewImage: newImage }),
    },
  });
}
