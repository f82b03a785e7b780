/**
 * The whole deployment of one stage: one DynamoDB table, one KMS key and an HTTP API with one Lambda function per
 * POST path of the route table (in nested stacks by area, see infra/route-stack.ts), plus a `$default` catch-all
 * that answers 404/405, one function per worker of the worker table, woken by the table's stream, one custom
 * resource per deploy task, and the alarms; and live sync's WebSocket API with one function per route key of the
 * socket route table (in a nested stack of its own, see infra/live.ts).
 */
import {
  CfnOutput,
  Duration,
  type NestedStack,
  RemovalPolicy,
  Stack,
  Tags,
  Validations,
  type StackProps,
} from 'aws-cdk-lib';
import { CfnStage, HttpApi, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE } from '../shared/db/table-definition';
import { deployTasks } from '../shared/deploy-tasks';
import { routes as routeTable, type Route } from '../shared/routes';
import {
  crdtAutoVersionsWorker,
  deliveryQueueWorker,
  scheduledWorkers,
  streamChangesWorker,
  workers,
} from '../shared/workers';
import {
  deadLetterAlarm,
  functionFaultAlarms,
  iteratorAgeAlarm,
  liveApiAlarms,
  metricsNamespace,
  notifyOnEveryAlarm,
  queueAgeAlarm,
  serverErrorRateAlarm,
  streamDeadLetterAlarm,
  tableThrottleAlarms,
} from './alarms';
import { deadLetterQueue } from './dead-letters';
import { DeployTaskRun } from './deploy-task';
import {
  LIVE_STAGE_THROTTLE,
  ROUTE_LIMITS,
  STAGE_THROTTLE,
  WORKER_RESERVED_CONCURRENCY,
  type Throttle,
} from './limits';
import {
  QUEUE_WORKER_TIMEOUT,
  ServiceFunction,
  type AiBaseUrls,
  type DataResources,
  type FunctionSettings,
  type LogLevel,
} from './service-function';
import { LiveApi, LiveRouteStack } from './live';
import { NO_AUTHORIZER_REASON, RouteStack, groupRoutes } from './route-stack';
import { sesSending, type SesProps } from './ses';

export interface CollabStackProps extends StackProps {
  /** Distinguishes deployments in one account (key alias, API name, tags); see assertValidStage. @default 'dev' */
  readonly stage?: string;
  /** Workspace creations allowed per source IP per hour; 0 disables the limit. @default 10 */
  readonly workspaceCreateLimitPerHour?: number;
  /** @default 'INFO' */
  readonly logLevel?: LogLevel;
  /** Stage-wide default for every route. @default STAGE_THROTTLE (infra/limits.ts) */
  readonly throttle?: Throttle;
  /**
   * The live WebSocket stage's throttle, frames in per second (`-c liveThrottleRate`, `-c liveThrottleBurst`).
   * @default LIVE_STAGE_THROTTLE (infra/limits.ts, where its size is worked out)
   */
  readonly liveThrottle?: Throttle;
  /**
   * Automatic versions of an editor (decisions §14): seconds of quiet, and the oldest unversioned change's age, after
   * which one is kept (`-c crdtVersionQuietSeconds`, `-c crdtVersionMaxSeconds`). @default 300 and 3,600
   */
  readonly crdtVersionQuietSeconds?: number;
  readonly crdtVersionMaxSeconds?: number;
  /** Ask AI's provider endpoints, each an http(s) URL. @default the providers' public endpoints */
  readonly aiBaseUrls?: AiBaseUrls;
  /**
   * Reserve the concurrency of infra/limits.ts. Opt-in: Lambda keeps 100 of an account's concurrency unreserved, so
   * the reservations need a quota of their total + 100, and a new account's quota is often 10: with reservations on
   * by default, a first deploy there would roll back. @default false
   */
  readonly reserveConcurrency?: boolean;
  /** SNS topic every alarm notifies (when it fires and when it recovers). @default alarms without actions */
  readonly alarmTopicArn?: string;
  /**
   * Webhook destinations may be private, loopback or link-local addresses (docs/decisions.md §11). Only for a
   * deployment whose receivers live inside its own network. @default false
   */
  readonly webhookAllowPrivateUrls?: boolean;
  /**
   * The SES identity the default email transport sends from, and optionally its configuration set or, for sending
   * authorization, another account's identity ARN (infra/ses.ts). @default none: no function may send through SES
   */
  readonly ses?: SesProps;
  /**
   * Create API Gateway's account-level CloudWatch Logs role and point the account and region's setting at it (kept
   * when the stack goes, see infra/api-gateway-account.ts): the live WebSocket stage's access logs need it, and a
   * new account has none. false leaves the setting to whoever manages it; it must then already name a role, or the
   * WebSocket stage fails to deploy. @default true
   */
  readonly apiGatewayCloudWatchRole?: boolean;
  /** The route table to deploy; tests add routes to it to measure growth. @default the route table */
  readonly routes?: readonly Route[];
}

/** A bare `cdk deploy` lands here, never on a production stage. */
export const DEFAULT_STAGE = 'dev';

/** The stage becomes part of the stack name, the key alias and the API name, which accept little more than this. */
export function assertValidStage(stage: string): void {
  if (!/^[A-Za-z0-9-]{1,32}$/.test(stage)) {
    throw new Error(`Stage "${stage}" must be 1-32 letters, digits or hyphens.`);
  }
}

const SERVICE_NAME = 'collab-backend';

/** One JSON object per request, from the `$context` variables of HTTP APIs. */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  latency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
});

export class CollabStack extends Stack {
  readonly table: dynamodb.Table;
  readonly encryptionKey: kms.Key;
  readonly api: HttpApi;
  /** Live sync's WebSocket API and its stage. */
  readonly live: LiveApi;
  /** The nested stacks holding the route functions. */
  readonly routeStacks: readonly RouteStack[];
  /** The nested stack holding the WebSocket API's functions. */
  readonly liveRouteStack: LiveRouteStack;
  /** Every nested stack: the route stacks, then the live one. */
  readonly nestedStacks: readonly NestedStack[];
  /** The function of each POST path, by path. */
  readonly routeFunctions: ReadonlyMap<string, ServiceFunction>;

  constructor(scope: Construct, id: string, props: CollabStackProps = {}) {
    super(scope, id, props);
    const stage = props.stage ?? DEFAULT_STAGE;
    assertValidStage(stage);
    Tags.of(this).add('service', SERVICE_NAME);
    Tags.of(this).add('stage', stage);
    // Before anything is built, so that a malformed ARN fails at once; the aspect reaches alarms added later.
    if (props.alarmTopicArn !== undefined) notifyOnEveryAlarm(this, props.alarmTopicArn);
    const reserveConcurrency = props.reserveConcurrency ?? false;
    const routes = props.routes ?? routeTable;
    for (const path of Object.keys(ROUTE_LIMITS)) {
      // A limit on a path the API does not have would fail the deployment (a route setting for a missing route
      // key) or do nothing; fail the synthesis instead.
      if (!routes.some((route) => route.path === path))
        throw new Error(`infra/limits.ts limits ${path}, which is not in the route table.`);
    }

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: PARTITION_KEY, type: dynamodb.AttributeType.STRING },
      sortKey: { name: SORT_KEY, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The workers read it: migration and delivery items are written in the same transaction as their cause.
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // AWS-managed key (aws/dynamodb): its use shows in CloudTrail, and there is no key policy to get wrong. A
      // customer key would add a failure mode (a disabled key makes the table unreadable) for little gain: the
      // secrets in the table are already envelope-encrypted under our own key below, and the rest is
      // tenant-scoped data that the table's IAM grants already guard.
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
    });
    for (const index of GLOBAL_INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
        ...(index.include === undefined
          ? { projectionType: dynamodb.ProjectionType.ALL }
          : { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }),
      });
    }

    // Losing this key loses every secret encrypted under it, hence RETAIN.
    this.encryptionKey = new kms.Key(this, 'SecretsKey', {
      description: `${SERVICE_NAME} (${stage}): envelope encryption of auth tokens and customer secrets`,
      alias: `alias/${SERVICE_NAME}/${stage}/secrets`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.api = new HttpApi(this, 'Api', {
      apiName: `${SERVICE_NAME}-${stage}`,
      description: `${SERVICE_NAME} (${stage}): POST operations of the route table`,
    });

    const throttle = props.throttle ?? STAGE_THROTTLE;
    // Before any function: route functions, the migration worker and the socket functions refer to its id.
    this.live = new LiveApi(this, 'Live', {
      name: `${SERVICE_NAME}-${stage}`,
      stage,
      description: `${SERVICE_NAME} (${stage}): live sync of Yjs documents over the y-websocket protocol`,
      throttle: props.liveThrottle ?? LIVE_STAGE_THROTTLE,
      accountLogsRole: props.apiGatewayCloudWatchRole ?? true,
    });

    const settings: FunctionSettings = {
      serviceName: SERVICE_NAME,
      logLevel: props.logLevel ?? 'INFO',
      metricsNamespace: metricsNamespace(SERVICE_NAME, stage),
    };
    const deliveryQueue = this.deliveryQueue();
    const ses = sesSending(this, props.ses ?? {});
    const resources: DataResources = {
      table: this.table,
      encryptionKey: this.encryptionKey,
      deliveryQueue,
      live: this.live.reference,
      ...(ses === undefined ? {} : { ses }),
    };
    const aiBaseUrls = props.aiBaseUrls ?? {};
    for (const [provider, url] of Object.entries(aiBaseUrls)) {
      // Checked here so that a typo fails `cdk synth`, not the first Ask AI request after a deploy.
      if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url))
        throw new Error(`The ${provider} base URL must be an http(s) URL, got "${url}".`);
    }

    this.routeStacks = groupRoutes(routes).map(
      (group) =>
        new RouteStack(this, {
          group,
          api: this.api,
          resources,
          settings,
          workspaceCreateLimitPerHour: props.workspaceCreateLimitPerHour ?? 10,
          aiBaseUrls,
          reserveConcurrency,
        }),
    );
    this.routeFunctions = new Map(this.routeStacks.flatMap((routeStack) => [...routeStack.routeFunctions]));
    this.liveRouteStack = new LiveRouteStack(this, 'LiveSocketRoutes', {
      live: this.live.reference,
      resources,
      settings,
    });
    this.nestedStacks = [...this.routeStacks, this.liveRouteStack];
    // With auto-deploy, the stage's first deployment is made when it is created: after the routes, so that it has them.
    if (this.liveRouteStack.nestedStackResource !== undefined)
      this.live.stage.node.addDependency(this.liveRouteStack.nestedStackResource);

    // Anything else (unknown path, or a known path with another method) gets the API's error envelope, not
    // API Gateway's own {"message":"Not Found"}.
    const notRouted = new ServiceFunction(this, 'NotRouted', {
      kind: 'unrouted',
      entry: 'functions/gateway/not-routed.ts',
      settings,
    });
    const defaultRoute = new HttpRoute(this.api, 'DefaultRoute', {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('NotRoutedIntegration', notRouted.function),
    });
    Validations.of(defaultRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: NO_AUTHORIZER_REASON });

    // The stream workers (document migration): each wakes only for the items its trigger names.
    const workerRuns = workers.map((worker) => ({
      worker,
      handler: new ServiceFunction(this, worker.id, {
        kind: 'worker',
        worker,
        resources,
        settings,
        reservedConcurrency: reserveConcurrency ? WORKER_RESERVED_CONCURRENCY : undefined,
      }),
    }));

    // The delivery queue's worker: webhook attempts and CRDT emissions, retried through the queue.
    const deliveryWorker = new ServiceFunction(this, deliveryQueueWorker.id, {
      kind: 'queueWorker',
      worker: deliveryQueueWorker,
      resources,
      settings,
      webhookAllowPrivateUrls: props.webhookAllowPrivateUrls ?? false,
    });

    // The scheduled workers (the live access backstop): an EventBridge rule each, at the rate the table declares.
    const scheduledRuns = scheduledWorkers.map((worker) => {
      const handler = new ServiceFunction(this, worker.id, { kind: 'scheduledWorker', worker, resources, settings });
      new events.Rule(this, `${worker.id}Schedule`, {
        description: worker.summary,
        schedule: events.Schedule.rate(Duration.minutes(worker.everyMinutes)),
        // The handler is told its period: it sets how old a check may be for the 60-s bound (decisions §13) to hold.
        targets: [
          new targets.LambdaFunction(handler.function, {
            retryAttempts: 0,
            event: events.RuleTargetInput.fromObject({ periodSeconds: worker.everyMinutes * 60 }),
          }),
        ],
      });
      return handler;
    });

    // Automatic versions' timing, for the functions that use it: the changes reader (a changed editor's check is due
    // after the quiet period) and the scheduled worker that keeps the versions.
    const versionTimes: Array<[string, number | undefined]> = [
      ['CRDT_VERSION_QUIET_SECONDS', props.crdtVersionQuietSeconds],
      ['CRDT_VERSION_MAX_SECONDS', props.crdtVersionMaxSeconds],
    ];
    for (const [name, value] of versionTimes) {
      if (value === undefined) continue;
      if (value < 1) throw new Error(`${name} must be at least 1 second.`);
      for (const fn of [
        ...workerRuns.filter((run) => run.worker.id === streamChangesWorker.id).map((run) => run.handler),
        ...scheduledRuns.filter((_, i) => scheduledWorkers[i].id === crdtAutoVersionsWorker.id),
      ])
        fn.function.addEnvironment(name, String(value));
    }

    // Deploy tasks put in place what request paths only read (the page-token key), before the API serves.
    const taskRuns = deployTasks.map((task) => new DeployTaskRun(this, task.id, { task, resources, settings }));

    const stageResource = this.configureStage(throttle);
    for (const routeStack of this.routeStacks) {
      // RouteSettings name route keys, which must exist when the stage is created or updated.
      if (routeStack.nestedStackResource !== undefined)
        stageResource.addResourceDependency(routeStack.nestedStackResource);
    }
    // No request reaches a route, or a live connection its function, before the secrets it reads exist.
    for (const run of taskRuns) {
      stageResource.node.addDependency(run.resource);
      this.live.stage.node.addDependency(run.resource);
    }

    serverErrorRateAlarm(this, this.api);
    // The WebSocket stage's own errors and the table's throttling: parent-stack resources, watched here (the live
    // functions' failures are watched in their nested stack, infra/live.ts).
    liveApiAlarms(this, this.live.api, stage);
    tableThrottleAlarms(
      this,
      this.table,
      GLOBAL_INDEXES.map((index) => index.name),
    );
    // The functions of this stack (each nested stack watches its own). The Provider framework's function is left
    // out: it runs only during deployments, and its failure fails the deployment, which is louder than an alarm.
    functionFaultAlarms(this, [
      notRouted,
      deliveryWorker,
      ...workerRuns.map((run) => run.handler),
      ...scheduledRuns,
      ...taskRuns.map((run) => run.handler),
    ]);
    if (deliveryQueue.deadLetterQueue !== undefined) {
      deadLetterAlarm(
        this,
        'DeliveryDeadLettersAlarm',
        deliveryQueue.deadLetterQueue.queue,
        deliveryQueueWorker.summary,
      );
    }
    queueAgeAlarm(this, 'DeliveryQueueAge', deliveryQueue);
    for (const { worker, handler } of workerRuns) {
      if (handler.deadLetters !== undefined)
        deadLetterAlarm(this, `${worker.id}DeadLetters`, handler.deadLetters, worker.summary);
      streamDeadLetterAlarm(this, `${worker.id}StreamDeadLetters`, handler.logGroup, worker.id, worker.summary);
      iteratorAgeAlarm(this, `${worker.id}IteratorAge`, handler);
    }

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL of the API' });
    new CfnOutput(this, 'LiveUrl', {
      value: this.live.stage.url,
      description: 'WebSocket URL of live sync (LIVE_URL, the serverUrl of /v2/crdt/live/authorize)',
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'The DynamoDB table' });
  }

  /**
   * The delivery queue (docs/design.md "Work after the response"): a standard queue, encrypted, TLS only, whose
   * jobs go to a dead-letter queue after five failed receives (storage unreachable for minutes, a bug). A failed
   * webhook attempt is not a failed receive: the worker records it and queues the next attempt itself.
   */
  private deliveryQueue(): sqs.Queue {
    const deadLetters = deadLetterQueue(
      this,
      'DeliveryDeadLetters',
      'This queue is itself the dead-letter queue of the delivery queue: jobs the delivery worker kept failing, kept for the operator.',
    );
    return new sqs.Queue(this, 'DeliveryQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(QUEUE_WORKER_TIMEOUT.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: deadLetters, maxReceiveCount: 5 },
    });
  }

  /**
   * Access logs and throttling on the `$default` stage: the stage default for every route, and the routes of
   * infra/limits.ts with a throttle of their own. HttpApi creates that stage (auto-deploy) without passing these
   * settings through, so they are set on its L1 resource (keeping HttpApi's own stage keeps `api.url` and the
   * route deployment wiring as CDK makes them).
   */
  private configureStage(throttle: Throttle): CfnStage {
    const cfnStage = this.api.defaultStage?.node.defaultChild;
    if (!(cfnStage instanceof CfnStage)) {
      throw new Error('The HTTP API has no default stage to configure.');
    }
    // Kept longer than the function logs: this is the record of who called what, asked for after the fact.
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', { retention: logs.RetentionDays.THREE_MONTHS });
    cfnStage.accessLogSettings = { destinationArn: accessLogs.logGroupArn, format: ACCESS_LOG_FORMAT };
    cfnStage.defaultRouteSettings = {
      throttlingRateLimit: throttle.rateLimit,
      throttlingBurstLimit: throttle.burstLimit,
    };

    const routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = {};
    for (const [path, limits] of Object.entries(ROUTE_LIMITS)) {
      if (!('throttle' in limits)) continue;
      routeSettings[`POST ${path}`] = {
        ThrottlingRateLimit: limits.throttle.rateLimit,
        ThrottlingBurstLimit: limits.throttle.burstLimit,
      };
    }
    // RouteSettings is untyped JSON in the L1 resource, so it takes CloudFormation's own property names.
    cfnStage.routeSettings = routeSettings;
    return cfnStage;
  }
}
