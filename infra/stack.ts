/**
 * The whole deployment: one DynamoDB table, one KMS key and an HTTP API with one Lambda
 * function per POST path of the route table, plus a `$default` catch-all that answers 404/405, and one
 * function per worker of the worker table, woken by the table's stream.
 */
import { CfnOutput, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import { CfnStage, HttpApi, HttpMethod, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE } from '../shared/db/table-definition';
import { routeId, routes } from '../shared/routes';
import { workers } from '../shared/workers';
import { RouteFunction, type AiBaseUrls, type FunctionSettings, type LogLevel } from './route-function';

/** Requests per second across the stage; protects the account's Lambda concurrency and the bill from a flood. */
export interface ThrottleSettings {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface CollabStackProps extends StackProps {
  /** Workspace creations allowed per source IP per hour; 0 disables the limit. @default 10 */
  readonly workspaceCreateLimitPerHour?: number;
  /** Distinguishes deployments in one account (key alias, API name, tags). @default 'prod' */
  readonly stage?: string;
  /** @default 'INFO' */
  readonly logLevel?: LogLevel;
  /** Stage-wide default for every route. @default 100 requests/s, bursts of 200 */
  readonly throttle?: ThrottleSettings;
  /** Ask AI's provider endpoints, each an http(s) URL. @default the providers' public endpoints */
  readonly aiBaseUrls?: AiBaseUrls;
}

const SERVICE_NAME = 'collab-backend';
const DEFAULT_THROTTLE: ThrottleSettings = { rateLimit: 100, burstLimit: 200 };

/**
 * Why no route has an API Gateway authorizer (cdk-nag APIG4): the credentials are the service's own (API key +
 * auth token, or workspace id + token, in x-service-* headers), checked against the table by the shared
 * middleware of each function, and some routes are public by contract.
 */
const NO_AUTHORIZER_REASON =
  'Authentication is the API key + auth token (or workspace id + token) in the x-service-* headers, checked ' +
  'against the table by the shared middleware of every function with a 30 s cache; a Lambda authorizer would ' +
  'add a second invocation per request and a second place for the rules. Workspace create and the $default ' +
  '404/405 answer are public by the API contract.';

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
  /** The function of each POST path, by path. */
  readonly routeFunctions: ReadonlyMap<string, RouteFunction>;

  constructor(scope: Construct, id: string, props: CollabStackProps = {}) {
    super(scope, id, props);
    const stage = props.stage ?? 'prod';
    // It becomes part of the key alias and the API name, which accept little more than this.
    if (!/^[A-Za-z0-9-]{1,32}$/.test(stage)) {
      throw new Error(`Stage "${stage}" must be 1-32 letters, digits or hyphens.`);
    }
    Tags.of(this).add('service', SERVICE_NAME);
    Tags.of(this).add('stage', stage);

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
    this.configureStage(props.throttle ?? DEFAULT_THROTTLE);

    const settings: FunctionSettings = { serviceName: SERVICE_NAME, logLevel: props.logLevel ?? 'INFO' };
    const resources = { table: this.table, encryptionKey: this.encryptionKey };
    const workspaceCreateLimitPerHour = props.workspaceCreateLimitPerHour ?? 10;
    const aiBaseUrls = props.aiBaseUrls ?? {};
    for (const [provider, url] of Object.entries(aiBaseUrls)) {
      // Checked here so that a typo fails `cdk synth`, not the first Ask AI request after a deploy.
      if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url)) throw new Error(`The ${provider} base URL must be an http(s) URL, got "${url}".`);
    }

    // One function per POST path, even where paths share a handler file: each gets its own grants, logs,
    // concurrency and metrics.
    const routeFunctions = new Map<string, RouteFunction>();
    for (const route of routes) {
      const id = routeId(route.path);
      const routeFunction = new RouteFunction(this, id, { route, resources, settings, workspaceCreateLimitPerHour, aiBaseUrls });
      const httpRoute = new HttpRoute(this.api, `${id}Route`, {
        httpApi: this.api,
        routeKey: HttpRouteKey.with(route.path, HttpMethod.POST),
        integration: new HttpLambdaIntegration(`${id}Integration`, routeFunction.function),
      });
      Validations.of(httpRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: NO_AUTHORIZER_REASON });
      routeFunctions.set(route.path, routeFunction);
    }
    this.routeFunctions = routeFunctions;

    // The stream workers (document migration): each wakes only for the items its trigger names.
    for (const worker of workers) {
      new RouteFunction(this, worker.id, { worker, table: this.table, settings });
    }

    // Anything else (unknown path, or a known path with another method) gets the API's error envelope, not
    // API Gateway's own {"message":"Not Found"}.
    const notRouted = new RouteFunction(this, 'NotRouted', { entry: 'functions/gateway/not-routed.ts', settings });
    const defaultRoute = new HttpRoute(this.api, 'DefaultRoute', {
      httpApi: this.api,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('NotRoutedIntegration', notRouted.function),
    });
    Validations.of(defaultRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: NO_AUTHORIZER_REASON });

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL of the API' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName, description: 'The DynamoDB table' });
  }

  /**
   * Access logs and throttling on the `$default` stage. HttpApi creates that stage without passing either
   * setting through, so they are set on its L1 resource (keeping HttpApi's own stage keeps `api.url` and the
   * route deployment wiring as CDK makes them).
   */
  private configureStage(throttle: ThrottleSettings): void {
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
  }
}
