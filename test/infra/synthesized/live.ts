/**
 * Live sync on AWS (docs/decisions.md §13): the WebSocket API, one function per entry of the socket route table on
 * its route key, `execute-api:ManageConnections` exactly where a declaration asks for it and only on this API's
 * stage, the live URLs exactly where they are read, and the stage's URL as an output. Expectations are written from
 * the tables' data (`connections: 'manage'`), not derived with the code under test.
 */
import { deployTasks } from '../../../shared/deploy-tasks';
import { routes, socketRoutes } from '../../../shared/routes';
import { queueWorkers, scheduledWorkers, workers } from '../../../shared/workers';
import {
  type Deployment,
  type Located,
  describeReference,
  environmentOf,
  functionWithDescription,
  grantsOfServices,
  resourcesOfType,
  synthesize,
} from '../templates';

/** The route whose function answers `serverUrl`: it reads LIVE_URL without touching connections. */
const AUTHORIZE_PATH = '/v2/crdt/live/authorize';

const deployment = synthesize();
const preview = synthesize({ stage: 'pr-7' });
/** A deployment into an account whose API Gateway logging role is managed elsewhere (-c apiGatewayCloudWatchRole=false). */
const managedElsewhere = synthesize({ apiGatewayCloudWatchRole: false });

/** AWS's policy for API Gateway's account-level logging role, as a role's ManagedPolicyArns names it. */
const PUSH_TO_CLOUDWATCH_LOGS = {
  'Fn::Join': [
    '',
    ['arn:', { Ref: 'AWS::Partition' }, ':iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs'],
  ],
};

function webSocketApis(target: Deployment): Located[] {
  return resourcesOfType(target, 'AWS::ApiGatewayV2::Api').filter(
    (api) => api.resource.Properties.ProtocolType === 'WEBSOCKET',
  );
}

/** Routes, integrations and stages of the WebSocket API (their ApiId, read across stacks, names it). */
function ofWebSocketApi(target: Deployment, type: string): Located[] {
  return resourcesOfType(target, type).filter(
    (resource) => describeReference(resource.resource.Properties.ApiId, resource.stack) === 'websocket api Ref',
  );
}

/** Every function of the deployment by description, with what its entry declares about live connections. */
function declaredFunctions(): Array<{ description: string; manages: boolean; readsLiveUrl: boolean }> {
  const manages = (declaration: object) => 'connections' in declaration && declaration.connections === 'manage';
  return [
    ...routes.map((route) => ({
      description: `POST ${route.path}`,
      manages: manages(route),
      readsLiveUrl: manages(route) || route.path === AUTHORIZE_PATH,
    })),
    ...socketRoutes.map((route) => ({
      description: `WebSocket ${route.routeKey}`,
      manages: manages(route),
      readsLiveUrl: manages(route),
    })),
    ...[...workers, ...queueWorkers, ...scheduledWorkers, ...deployTasks].map((entry) => ({
      description: entry.summary,
      manages: manages(entry),
      readsLiveUrl: manages(entry),
    })),
  ];
}

/** `<stage>/<method>/@connections/*` of the deployment's WebSocket API, as describeReference reads an ARN. */
function connectionArns(stage: string): string[] {
  return ['DELETE', 'GET', 'POST'].map(
    (method) =>
      `execute-api:ManageConnections on arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:websocket api Ref/${stage}/${method}/@connections/*`,
  );
}

const liveUrl = (stage: string) => `wss://websocket api Ref.execute-api.<AWS::Region>.<AWS::URLSuffix>/${stage}`;
const connectionsEndpoint = (stage: string) =>
  `https://websocket api Ref.execute-api.<AWS::Region>.<AWS::URLSuffix>/${stage}`;

describe('live sync in the CDK stack', () => {
  it('makes one WebSocket API and one auto-deployed stage, both named after the stage, in the parent stack', () => {
    const apis = webSocketApis(preview);
    const stages = ofWebSocketApi(preview, 'AWS::ApiGatewayV2::Stage');

    expect(apis.map((api) => [api.stack, api.resource.Properties.Name])).toEqual([
      [preview.parent, 'collab-backend-pr-7-live'],
    ]);
    expect(
      stages.map((stage) => [stage.stack, stage.resource.Properties.StageName, stage.resource.Properties.AutoDeploy]),
    ).toEqual([[preview.parent, 'pr-7', true]]);
  });

  it('sends every frame that is not a connect or disconnect to $default: the conventional selection expression and no custom route', () => {
    const [api] = webSocketApis(deployment);
    const routeKeys = ofWebSocketApi(deployment, 'AWS::ApiGatewayV2::Route').map(
      (route) => route.resource.Properties.RouteKey,
    );

    expect(api.resource.Properties.RouteSelectionExpression).toBe('$request.body.action');
    expect(routeKeys.sort()).toEqual(socketRoutes.map((route) => route.routeKey).sort());
  });

  it.each(socketRoutes.map((route) => [route.routeKey, route] as const))(
    '%s: routed to its own function (its entry, route timeout) through a Lambda proxy integration',
    (routeKey, socketRoute) => {
      const fn = functionWithDescription(deployment, `WebSocket ${routeKey}`);
      const [route] = ofWebSocketApi(deployment, 'AWS::ApiGatewayV2::Route').filter(
        (candidate) => candidate.resource.Properties.RouteKey === routeKey,
      );
      const target = route.resource.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
      const integration = route.stack.resources[target['Fn::Join'][1][1].Ref];

      expect(route.stack).toBe(fn.stack);
      expect(route.stack).not.toBe(deployment.parent);
      expect(integration.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        IntegrationUri: { 'Fn::Join': ['', expect.arrayContaining([{ 'Fn::GetAtt': [fn.id, 'Arn'] }])] },
      });
      expect(fn.resource.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Timeout: 29,
        Handler: 'index.handler',
      });
      expect(socketRoute.entry).toMatch(/^functions\/live\//);
    },
  );

  it("grants execute-api:ManageConnections exactly to the functions whose entry declares connections: 'manage', on this API's stage @connections paths only", () => {
    const functions = resourcesOfType(deployment, 'AWS::Lambda::Function').filter(
      (fn) => !String(fn.resource.Properties.Description).startsWith('AWS CDK resource provider'),
    );
    const granted = functions
      .filter((fn) => grantsOfServices(fn, 'execute-api').length > 0)
      .map((fn) => String(fn.resource.Properties.Description));
    const declared = declaredFunctions()
      .filter((entry) => entry.manages)
      .map((entry) => entry.description);

    expect(granted.sort()).toEqual(declared.sort());
    // What the brief of issue 24 names, so that a table edit that dropped one is seen here too.
    expect(declared).toEqual(
      expect.arrayContaining([
        'POST /v2/crdt/add',
        'POST /v2/crdt/update',
        'WebSocket $connect',
        'WebSocket $default',
        'WebSocket $disconnect',
      ]),
    );
    expect(declared).not.toContain('POST /v2/crdt/get');
    for (const description of declared) {
      expect(grantsOfServices(functionWithDescription(deployment, description), 'execute-api')).toEqual(
        connectionArns('dev'),
      );
    }
  });

  it('names the stage in the ManageConnections resources of another stage', () => {
    expect(grantsOfServices(functionWithDescription(preview, 'WebSocket $default'), 'execute-api')).toEqual(
      connectionArns('pr-7'),
    );
  });

  it('sets LIVE_URL and LIVE_CONNECTIONS_ENDPOINT on the functions that manage connections and the authorize route, and on no other', () => {
    const functions = resourcesOfType(preview, 'AWS::Lambda::Function');
    const withVariables = functions
      .filter((fn) => 'LIVE_URL' in environmentOf(fn) || 'LIVE_CONNECTIONS_ENDPOINT' in environmentOf(fn))
      .map((fn) => String(fn.resource.Properties.Description));
    const expected = declaredFunctions()
      .filter((entry) => entry.readsLiveUrl)
      .map((entry) => entry.description);

    expect(withVariables.sort()).toEqual(expected.sort());
    expect(expected).toContain(`POST ${AUTHORIZE_PATH}`);
    for (const description of expected) {
      const environment = environmentOf(functionWithDescription(preview, description));
      const fn = functionWithDescription(preview, description);

      expect([
        describeReference(environment.LIVE_URL, fn.stack),
        describeReference(environment.LIVE_CONNECTIONS_ENDPOINT, fn.stack),
      ]).toEqual([liveUrl('pr-7'), connectionsEndpoint('pr-7')]);
    }
  });

  it('outputs the WebSocket URL browsers connect to', () => {
    const outputs = preview.parent.template.toJSON().Outputs as Record<string, { Value: unknown }>;

    expect(describeReference(outputs.LiveUrl?.Value, preview.parent)).toBe(liveUrl('pr-7'));
  });

  it("writes JSON access logs and throttles the WebSocket stage by frames, above the HTTP API's requests", () => {
    const [stage] = ofWebSocketApi(deployment, 'AWS::ApiGatewayV2::Stage');
    const accessLogs = stage.resource.Properties.AccessLogSettings as { DestinationArn: unknown; Format: string };

    expect(describeReference(accessLogs.DestinationArn, deployment.parent)).toBe('log group');
    expect(JSON.parse(accessLogs.Format)).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      eventType: '$context.eventType',
      routeKey: '$context.routeKey',
      connectionId: '$context.connectionId',
      status: '$context.status',
    });
    expect(stage.resource.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 1000,
      ThrottlingBurstLimit: 2000,
    });
  });

  it("sets API Gateway's account-level logging role, which the WebSocket stage's access logs need, before the stage is created", () => {
    const accounts = resourcesOfType(deployment, 'AWS::ApiGateway::Account');
    const [stage] = ofWebSocketApi(deployment, 'AWS::ApiGatewayV2::Stage');

    expect(accounts.map((account) => account.stack)).toEqual([deployment.parent]);
    const [account] = accounts;
    expect(stage.resource.DependsOn).toEqual(expect.arrayContaining([account.id]));
    const roleArn = account.resource.Properties.CloudWatchRoleArn as { 'Fn::GetAtt': [string, string] };
    expect(roleArn['Fn::GetAtt'][1]).toBe('Arn');
    const role = deployment.parent.resources[roleArn['Fn::GetAtt'][0]];
    expect(role.Type).toBe('AWS::IAM::Role');
    // Only API Gateway may assume it, and it may only do what AWS's policy for this role allows: nothing inline.
    expect(role.Properties.AssumeRolePolicyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'sts:AssumeRole', Principal: { Service: 'apigateway.amazonaws.com' } }],
    });
    expect(role.Properties.ManagedPolicyArns).toEqual([PUSH_TO_CLOUDWATCH_LOGS]);
    expect(role.Properties.Policies).toBeUndefined();
    const attached = resourcesOfType(deployment, 'AWS::IAM::Policy').filter((policy) =>
      JSON.stringify(policy.resource.Properties.Roles ?? []).includes(roleArn['Fn::GetAtt'][0]),
    );
    expect(attached).toEqual([]);
  });

  it('keeps the logging role and the account setting when the stack is deleted or they leave the template, so other APIs of the region keep logging', () => {
    const [account] = resourcesOfType(deployment, 'AWS::ApiGateway::Account');
    const roleId = (account.resource.Properties.CloudWatchRoleArn as { 'Fn::GetAtt': [string, string] })[
      'Fn::GetAtt'
    ][0];
    const retention = (resource: { DeletionPolicy?: string; UpdateReplacePolicy?: string }) => [
      resource.DeletionPolicy,
      resource.UpdateReplacePolicy,
    ];

    expect([
      retention(account.resource),
      retention(deployment.parent.resources[roleId] as { DeletionPolicy?: string; UpdateReplacePolicy?: string }),
    ]).toEqual([
      ['Retain', 'Retain'],
      ['Retain', 'Retain'],
    ]);
  });

  it('leaves the account setting alone when it is managed elsewhere (apiGatewayCloudWatchRole false), still writing the access logs', () => {
    const [stage] = ofWebSocketApi(managedElsewhere, 'AWS::ApiGatewayV2::Stage');
    const managedPolicies = resourcesOfType(managedElsewhere, 'AWS::IAM::Role').filter(
      (role) => role.resource.Properties.ManagedPolicyArns !== undefined,
    );

    expect(resourcesOfType(managedElsewhere, 'AWS::ApiGateway::Account')).toEqual([]);
    expect(managedPolicies).toEqual([]);
    expect(
      describeReference(
        (stage.resource.Properties.AccessLogSettings as { DestinationArn: unknown }).DestinationArn,
        managedElsewhere.parent,
      ),
    ).toBe('log group');
  });

  it('creates the stage after its routes (its first automatic deployment has them) and after the deploy tasks', () => {
    const [stage] = ofWebSocketApi(deployment, 'AWS::ApiGatewayV2::Stage');
    const [routeStack] = ofWebSocketApi(deployment, 'AWS::ApiGatewayV2::Route').map((route) => route.stack);
    const nestedStackResource = resourcesOfType(deployment, 'AWS::CloudFormation::Stack').filter((nested) =>
      nested.id.startsWith(routeStack.name),
    );
    const taskRuns = resourcesOfType(deployment, 'Custom::ServerSecrets').map((run) => run.id);

    expect(nestedStackResource).toHaveLength(1);
    expect(stage.resource.DependsOn).toEqual(expect.arrayContaining([nestedStackResource[0].id, ...taskRuns]));
  });
});
