/**
 * Live sync (docs/decisions.md §13) on AWS: an API Gateway WebSocket API whose three route keys each invoke a function
 * of the socket route table (shared/routes.ts `socketRoutes`), and what the functions that talk to its connections
 * are handed (the stage's URLs, and `execute-api:ManageConnections` on its `@connections` paths only).
 *
 * The API and its stage live in the parent stack, built before any function, so that every function that needs them
 * (route functions in the nested stacks by area, the migration worker in the parent, the socket functions here) can
 * refer to the API's id. The socket functions, routes and integrations live in a nested stack of their own, like the
 * HTTP routes. Nothing refers to the stage resource itself: its URLs are built from the API id and the stage's name
 * (a literal), so the stage can wait for its routes (below) without a dependency cycle through the functions'
 * environment (API → route → integration → function → environment → stage).
 */
import { NestedStack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { LogGroupLogDestination, WebSocketApi, WebSocketRoute, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { socketRoutes as socketRouteTable, type SocketRoute } from '../shared/routes';
import { functionFaultAlarms, liveFailureAlarm } from './alarms';
import { ApiGatewayAccountLogsRole } from './api-gateway-account';
import { liveApiIn, type LiveApiReference } from './live-endpoints';
import type { Throttle } from './limits';
import { ServiceFunction, type DataResources, type FunctionSettings } from './service-function';

/** One JSON object per WebSocket event (connect, message, disconnect), from the `$context` variables of WebSocket APIs. */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  eventType: '$context.eventType',
  routeKey: '$context.routeKey',
  connectionId: '$context.connectionId',
  messageId: '$context.messageId',
  status: '$context.status',
  integrationLatency: '$context.integrationLatency',
  error: '$context.error.message',
  integrationError: '$context.integrationErrorMessage',
});

export interface LiveApiProps {
  /** `collab-backend-<stage>`: the API is named `<name>-live`. */
  readonly name: string;
  /** The deployment's stage: also the WebSocket stage's name, so the URL carries it (`wss://…/<stage>`). */
  readonly stage: string;
  readonly description: string;
  /** Stage-wide default for every route key (each message counts as a request). */
  readonly throttle: Throttle;
  /**
   * Create API Gateway's account-level CloudWatch Logs role and point the account's setting at it (infra/api-gateway-
   * account.ts); false when the account's setting is managed elsewhere and already names a role.
   */
  readonly accountLogsRole: boolean;
}

/** The WebSocket API and its stage (parent stack). */
export class LiveApi extends Construct {
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
  readonly reference: LiveApiReference;
  /** The account's logging role and setting, when this stack provides them. */
  readonly accountLogsRole?: ApiGatewayAccountLogsRole;

  constructor(scope: Construct, id: string, props: LiveApiProps) {
    super(scope, id);
    this.api = new WebSocketApi(this, 'Api', {
      apiName: `${props.name}-live`,
      description: props.description,
      // The frames are y-protocols messages (binary, base64 in text frames), never JSON: no expression matches a
      // custom route, so every message goes to `$default`. This is API Gateway's conventional expression.
      routeSelectionExpression: '$request.body.action',
    });
    // Kept as long as the HTTP API's: the record of who connected when, asked for after the fact.
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.THREE_MONTHS });
    this.stage = new WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: props.stage,
      autoDeploy: true,
      throttle: { rateLimit: props.throttle.rateLimit, burstLimit: props.throttle.burstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(ACCESS_LOG_FORMAT),
      },
    });
    // A WebSocket stage writes its access logs through API Gateway's account-level role (an HTTP API's stage uses a
    // service-linked role): in an account and region whose setting names no role, creating this stage fails. So the
    // stage waits for the setting when the stack provides it.
    if (props.accountLogsRole) {
      this.accountLogsRole = new ApiGatewayAccountLogsRole(this, 'AccountLogsRole');
      // CloudFormation's AWS::ApiGateway::Account once required an API Gateway resource to exist first (in an account
      // that had never used API Gateway); the API is there anyway, so the order costs nothing.
      this.accountLogsRole.account.node.addDependency(this.api);
      this.stage.node.addDependency(this.accountLogsRole.account);
    }
    this.reference = { apiId: this.api.apiId, stageName: props.stage };
  }
}

/** Why `$connect` has no API Gateway authorizer (cdk-nag APIG4). */
export const CONNECT_WITHOUT_AUTHORIZER_REASON =
  'The browser connects with a signed session token in the query string (docs/decisions.md §13), which the $connect ' +
  "function checks against the table together with the user's current access, and refuses the connection otherwise; " +
  'a Lambda authorizer would be a second invocation per connection and a second place for the rules.';

/**
 * Why `$default` and `$disconnect` have none: API Gateway runs authorizers on `$connect` only; every later frame of a
 * connection belongs to the connection `$connect` accepted, and its access is checked again by the message function.
 */
export const AUTHORIZED_AT_CONNECT_REASON =
  'WebSocket APIs authorize on $connect only: every later message and the disconnect of a connection belong to the ' +
  "connection $connect accepted, and the message function re-checks the user's access at least every 60 s.";

export interface LiveRouteStackProps {
  readonly live: LiveApiReference;
  readonly resources: DataResources;
  readonly settings: FunctionSettings;
  /** The socket route table to deploy. @default shared/routes.ts socketRoutes */
  readonly socketRoutes?: readonly SocketRoute[];
}

/** One function per socket route, each on its route key of the WebSocket API, plus their alarms. */
export class LiveRouteStack extends NestedStack {
  /** The function of each route key, by route key. */
  readonly socketFunctions: ReadonlyMap<string, ServiceFunction>;

  constructor(scope: Construct, id: string, props: LiveRouteStackProps) {
    const table = props.socketRoutes ?? socketRouteTable;
    super(scope, id, {
      description: `Live sync: the WebSocket API's ${table.length} route functions (${table.map((route) => route.routeKey).join(', ')})`,
    });

    // Through the same parameter as the functions' grants and environment: one reference to the parent's API.
    const api = WebSocketApi.fromWebSocketApiAttributes(this, 'Api', {
      webSocketId: liveApiIn(this, props.live).apiId,
    });
    const socketFunctions = new Map<string, ServiceFunction>();
    for (const socketRoute of table) {
      const handler = new ServiceFunction(this, socketRoute.id, {
        kind: 'socket',
        socketRoute,
        resources: props.resources,
        settings: props.settings,
      });
      const route = new WebSocketRoute(this, `${socketRoute.id}Route`, {
        webSocketApi: api,
        routeKey: socketRoute.routeKey,
        integration: new WebSocketLambdaIntegration(`${socketRoute.id}Integration`, handler.function),
      });
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: socketRoute.routeKey === '$connect' ? CONNECT_WITHOUT_AUTHORIZER_REASON : AUTHORIZED_AT_CONNECT_REASON,
      });
      socketFunctions.set(socketRoute.routeKey, handler);
    }
    this.socketFunctions = socketFunctions;

    functionFaultAlarms(this, [...socketFunctions.values()]);
    // The clients the live path's failures made resync, from the live metrics (shared/core/metrics.ts).
    liveFailureAlarm(this, {
      namespace: props.settings.metricsNamespace,
      serviceName: props.settings.serviceName,
      routeKeys: table.map((route) => route.routeKey),
    });
  }
}
