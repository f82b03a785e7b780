/**
 * The synthesized CloudFormation templates (the parent stack and its nested stacks): one function and one POST
 * route per route-table entry, the table and key settings the design relies on, and grants that follow each
 * entry's declaration and nothing more. Expected grants are written out here from the route table's data, not
 * derived with the code under test.
 */
import { Match } from 'aws-cdk-lib/assertions';
import {
  ACTIVITY_TIMELINE_ATTRIBUTES,
  GLOBAL_INDEXES,
  PARTITION_KEY,
  SORT_KEY,
  TTL_ATTRIBUTE,
  projectionOf,
} from '../../../shared/db/table-definition';
import { serverSecretsTask } from '../../../shared/deploy-tasks';
import { routes, socketRoutes, type Route } from '../../../shared/routes';
import { documentMigrationWorker, queueWorkers, scheduledWorkers, workers } from '../../../shared/workers';
import {
  type Located,
  describeReference,
  environmentOf,
  functionOf,
  functionWithDescription,
  grantsOf,
  grantsOfServices,
  resourcesOfType,
  synthesize,
} from '../templates';

const READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
const WRITE_ACTIONS = [
  ...READ_ACTIONS,
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
];
const KMS_ACTION = { encrypt: 'kms:GenerateDataKey', decrypt: 'kms:Decrypt' } as const;

/** What a route's role may do in DynamoDB and KMS, written out from its entry. */
function expectedDataGrants(route: Route): string[] {
  // Read-only routes may write their Idempotency-Key records, and only those (partition key IDEMPOTENCY#...).
  const idempotencyRecords =
    route.table === 'read' ? ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] : [];
  return [
    ...(route.table === 'write' ? WRITE_ACTIONS : READ_ACTIONS).map((action) => `${action} on table`),
    ...idempotencyRecords.map((action) => `${action} on table where dynamodb:LeadingKeys like IDEMPOTENCY#*`),
    ...(route.indexes ?? []).map((index) => `dynamodb:Query on table/index/${index}`),
    ...(route.kms ?? []).map((use) => `${KMS_ACTION[use]} on key`),
  ].sort();
}

const deployment = synthesize();
const routeCases = routes.map((route: Route) => [route.path, route] as const);

function notRoutedFunction(): Located {
  return functionWithDescription(deployment, 'functions/gateway/not-routed.ts (requests that match no route)');
}

describe('the CDK stack', () => {
  it('makes one function per route plus the $default one, one per WebSocket route, one per worker and one per deploy task (and its provider), never sharing a function between paths', () => {
    const functions = resourcesOfType(deployment, 'AWS::Lambda::Function');
    const providerFunctions = functions.filter((fn) =>
      String(fn.resource.Properties.Description).startsWith('AWS CDK resource provider framework'),
    );

    expect(functions).toHaveLength(
      routes.length + 1 + socketRoutes.length + workers.length + queueWorkers.length + scheduledWorkers.length + 2,
    );
    expect(providerFunctions).toHaveLength(1);
    expect(new Set(routes.map((route) => functionOf(deployment, route.path).id)).size).toBe(routes.length);
  });

  it.each(routeCases)('%s: function on nodejs22.x, arm64, traced, with its environment', (path, route) => {
    const fn = functionOf(deployment, path);
    const environment = environmentOf(fn);

    expect(fn.resource.Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
      MemorySize: 1024,
      Timeout: 29,
      Handler: 'index.handler',
    });
    expect(environment).toMatchObject({
      TABLE_NAME: expect.anything(),
      POWERTOOLS_SERVICE_NAME: 'collab-backend',
      LOG_LEVEL: 'INFO',
      WORKSPACE_CREATE_LIMIT_PER_HOUR: '10',
      NODE_OPTIONS: '--enable-source-maps',
    });
    expect('KMS_KEY_ARN' in environment).toBe((route.kms ?? []).length > 0);
  });

  it.each(routeCases)(
    "%s: routed as POST to its own function, in the same nested stack, on the parent's API",
    (path) => {
      const fn = functionOf(deployment, path);
      const routeResources = resourcesOfType(deployment, 'AWS::ApiGatewayV2::Route').filter(
        (route) => route.resource.Properties.RouteKey === `POST ${path}`,
      );
      expect(routeResources).toHaveLength(1);
      const [route] = routeResources;
      const target = route.resource.Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
      const integration = route.stack.resources[target['Fn::Join'][1][1].Ref];

      expect(route.stack).toBe(fn.stack);
      expect(route.stack).not.toBe(deployment.parent);
      expect(describeReference(route.resource.Properties.ApiId, route.stack)).toBe('api Ref');
      expect(integration.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        IntegrationUri: { 'Fn::GetAtt': [fn.id, 'Arn'] },
      });
    },
  );

  it('sends every other request to the not-routed function, which has no data access', () => {
    const fn = notRoutedFunction();
    deployment.parent.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });

    expect(Object.keys(environmentOf(fn)).sort()).toEqual(['LOG_LEVEL', 'NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME']);
    expect(grantsOf(fn).filter((grant) => !/^(logs|xray):/.test(grant))).toEqual([]);
  });

  it.each(routeCases)(
    '%s: DynamoDB and KMS grants are exactly what its entry declares (table, declared indexes, key)',
    (path, route) => {
      expect(grantsOfServices(functionOf(deployment, path), 'dynamodb', 'kms')).toEqual(expectedDataGrants(route));
    },
  );

  it('grants Query on exactly the indexes a route declares, by name', () => {
    const declared = {
      ...routes[0],
      path: '/v2/workspace/indexed',
      table: 'read',
      indexes: ['gsi1', 'gsi4'],
    } satisfies Route;
    const withIndexes = synthesize({ routes: [...routes, declared] });

    expect(
      grantsOfServices(functionOf(withIndexes, declared.path), 'dynamodb').filter((grant) =>
        grant.startsWith('dynamodb:Query'),
      ),
    ).toEqual(['dynamodb:Query on table', 'dynamodb:Query on table/index/gsi1', 'dynamodb:Query on table/index/gsi4']);
  });

  it('grants no Scan, no DescribeTable, no index wildcard and no table-wide "*" to any role in any stack', () => {
    const grants = resourcesOfType(deployment, 'AWS::Lambda::Function').flatMap((fn) => grantsOf(fn));

    expect(grants.filter((grant) => /dynamodb:(Scan|DescribeTable)\b/.test(grant))).toEqual([]);
    expect(grants.filter((grant) => grant.endsWith('/index/*'))).toEqual([]);
    expect(new Set(grants.filter((grant) => grant.endsWith(' on *')))).toEqual(
      new Set(['dynamodb:ListStreams on *', 'xray:PutTelemetryRecords on *', 'xray:PutTraceSegments on *']),
    );
  });

  it('wakes the migration worker from the table stream for active migration items only, retrying failed records', () => {
    const fn = functionWithDescription(deployment, documentMigrationWorker.summary);
    const mappings = resourcesOfType(deployment, 'AWS::Lambda::EventSourceMapping').filter(
      (mapping) => JSON.stringify(mapping.resource.Properties.FunctionName) === JSON.stringify({ Ref: fn.id }),
    );
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0].resource.Properties;
    const filters = (mapping.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters.map((filter) =>
      JSON.parse(filter.Pattern),
    );

    expect(fn.resource.Properties).toMatchObject({ Runtime: 'nodejs22.x', Timeout: 900 });
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      ParallelizationFactor: 1,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/DeadLetters/), 'Arn'] } },
      },
    });
    expect(filters).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { NewImage: { recordType: { S: ['documentMigration'] }, status: { S: ['pending', 'in_progress'] } } },
      },
    ]);
  });

  it('lets the migration worker read and write the table and read its stream, with no key access and only its own settings', () => {
    const fn = functionWithDescription(deployment, documentMigrationWorker.summary);

    expect(grantsOfServices(fn, 'dynamodb', 'kms')).toEqual(
      [
        ...WRITE_ACTIONS.map((action) => `${action} on table`),
        ...(documentMigrationWorker.indexes ?? []).map((index) => `dynamodb:Query on table/index/${index}`),
        'dynamodb:ListStreams on *',
        'dynamodb:DescribeStream on table StreamArn',
        'dynamodb:GetRecords on table StreamArn',
        'dynamodb:GetShardIterator on table StreamArn',
      ].sort(),
    );
    // It closes the document's live connections when a run starts (docs/decisions.md §13).
    expect(Object.keys(environmentOf(fn)).sort()).toEqual([
      'LIVE_CONNECTIONS_ENDPOINT',
      'LIVE_URL',
      'LOG_LEVEL',
      'NODE_OPTIONS',
      'POWERTOOLS_SERVICE_NAME',
      'TABLE_NAME',
    ]);
  });

  it('runs the server-secrets deploy task through a custom resource, with write access to the table and nothing else', () => {
    const fn = functionWithDescription(deployment, serverSecretsTask.summary);
    const runs = resourcesOfType(deployment, 'Custom::ServerSecrets');
    expect(runs).toHaveLength(1);
    const [run] = runs;
    const providerId = (run.resource.Properties.ServiceToken as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const provider = { stack: run.stack, id: providerId, resource: run.stack.resources[providerId] };

    expect(fn.stack).toBe(deployment.parent);
    expect(fn.resource.Properties).toMatchObject({ Runtime: 'nodejs22.x', Timeout: 60 });
    expect(grantsOfServices(fn, 'dynamodb', 'kms', 'lambda')).toEqual(
      WRITE_ACTIONS.map((action) => `${action} on table`).sort(),
    );
    expect(Object.keys(environmentOf(fn)).sort()).toEqual([
      'LOG_LEVEL',
      'NODE_OPTIONS',
      'POWERTOOLS_SERVICE_NAME',
      'TABLE_NAME',
    ]);
    expect(environmentOf(provider)).toEqual({ USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': [fn.id, 'Arn'] } });
    expect(grantsOfServices(provider, 'lambda', 'dynamodb', 'kms')).toEqual([
      'lambda:GetFunction on function',
      'lambda:InvokeFunction on function',
      'lambda:InvokeFunction on function:*',
    ]);
  });

  it("re-runs the deploy task when its bundle changes: the custom resource carries the bundle's content-hashed key", () => {
    const fn = functionWithDescription(deployment, serverSecretsTask.summary);
    const [run] = resourcesOfType(deployment, 'Custom::ServerSecrets');
    const bundleKey = (fn.resource.Properties.Code as { S3Key: string }).S3Key;

    expect(bundleKey).toMatch(/^[0-9a-f]{64}\.zip$/);
    expect(run.resource.Properties.taskVersion).toBe(bundleKey);
  });

  // One synthesis for the settings that only change environment variables.
  const configured = synthesize({
    workspaceCreateLimitPerHour: 3,
    aiBaseUrls: { openai: 'https://proxy.example/v1', gemini: 'https://gemini.example' },
  });

  it('passes the workspace creation limit from the stack props', () => {
    expect(environmentOf(functionOf(configured, '/v2/workspace/create'))).toMatchObject({
      WORKSPACE_CREATE_LIMIT_PER_HOUR: '3',
    });
  });

  const AI_VARIABLES = ['OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL', 'GEMINI_BASE_URL'];

  it("sets no AI base URL by default, so Ask AI uses the providers' public endpoints", () => {
    for (const route of routes) {
      expect(
        Object.keys(environmentOf(functionOf(deployment, route.path))).filter((name) => AI_VARIABLES.includes(name)),
      ).toEqual([]);
    }
  });

  it('passes the AI base URLs that are set to the functions that call the providers, and to no other', () => {
    for (const route of routes) {
      const set = Object.entries(environmentOf(functionOf(configured, route.path))).filter(([name]) =>
        AI_VARIABLES.includes(name),
      );
      expect(Object.fromEntries(set)).toEqual(
        route.path === '/v2/rewriter/ask-ai'
          ? { OPENAI_BASE_URL: 'https://proxy.example/v1', GEMINI_BASE_URL: 'https://gemini.example' }
          : {},
      );
    }
  });

  it('refuses an AI base URL that is not an http(s) URL at synthesis', () => {
    expect(() => synthesize({ aiBaseUrls: { anthropic: 'api.anthropic.com' } })).toThrow(
      /anthropic base URL must be an http\(s\) URL/,
    );
  });

  it('builds the table from the shared definition: on-demand, PITR, TTL, stream, deletion protection', () => {
    deployment.parent.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [
          { AttributeName: PARTITION_KEY, KeyType: 'HASH' },
          { AttributeName: SORT_KEY, KeyType: 'RANGE' },
        ],
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        DeletionProtectionEnabled: true,
        SSESpecification: { SSEEnabled: true },
        GlobalSecondaryIndexes: GLOBAL_INDEXES.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: projectionOf(index),
        })),
      }),
    });
  });

  it('projects into the judgments index (gsi5) only what Suggest Decision reads', () => {
    const [table] = resourcesOfType(deployment, 'AWS::DynamoDB::Table');
    const indexes = table.resource.Properties.GlobalSecondaryIndexes as Array<{
      IndexName: string;
      Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
    }>;

    expect(indexes.find((index) => index.IndexName === 'gsi5')?.Projection).toEqual({
      ProjectionType: 'INCLUDE',
      NonKeyAttributes: ['judgment', 'judgedText', 'judgmentReason', 'userId', 'timestamp', 'documentId'],
    });
    expect(
      indexes.filter((index) => index.Projection.ProjectionType === 'ALL').map((index) => index.IndexName),
    ).toEqual(['gsi1', 'gsi2', 'gsi3']);
  });

  it('keeps the four activity timelines on indexes of their own, sharing one sort key, with the slim projection', () => {
    const [table] = resourcesOfType(deployment, 'AWS::DynamoDB::Table');
    const indexes = table.resource.Properties.GlobalSecondaryIndexes as Array<{
      IndexName: string;
      KeySchema: Array<{ AttributeName: string }>;
      Projection: unknown;
    }>;
    const timelines = indexes.filter((index) => ['gsi6', 'gsi7', 'gsi8', 'gsi9'].includes(index.IndexName));

    expect(timelines.map((index) => index.KeySchema[1].AttributeName)).toEqual([
      'gsi6sk',
      'gsi6sk',
      'gsi6sk',
      'gsi6sk',
    ]);
    expect(timelines.map((index) => index.Projection)).toEqual(
      timelines.map(() => ({ ProjectionType: 'INCLUDE', NonKeyAttributes: [...ACTIVITY_TIMELINE_ATTRIBUTES] })),
    );
    const definitions = table.resource.Properties.AttributeDefinitions as Array<{ AttributeName: string }>;
    expect(definitions.filter((definition) => definition.AttributeName === 'gsi6sk')).toHaveLength(1);
  });

  it('rotates the KMS key and keeps it when the stack goes', () => {
    deployment.parent.template.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ EnableKeyRotation: true }),
    });
    expect(resourcesOfType(deployment, 'AWS::KMS::Alias')).toHaveLength(1);
  });

  it('creates no Secrets Manager secret and grants no secret access (the page-token key lives in the table)', () => {
    expect(resourcesOfType(deployment, 'AWS::SecretsManager::Secret')).toEqual([]);
    for (const fn of resourcesOfType(deployment, 'AWS::Lambda::Function'))
      expect(grantsOfServices(fn, 'secretsmanager')).toEqual([]);
  });

  it("gives every function, the provider framework's too, its own log group with one month of retention", () => {
    for (const fn of resourcesOfType(deployment, 'AWS::Lambda::Function')) {
      const logGroup = (fn.resource.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

      expect(fn.stack.resources[logGroup]).toMatchObject({
        Type: 'AWS::Logs::LogGroup',
        Properties: { RetentionInDays: 30 },
      });
    }
  });

  it("uses no AWS managed policies (each role writes to its own log group only), but on API Gateway's account-level logging role", () => {
    // That role serves every API of the account and region, so it carries AWS's policy for it (test/infra/live.test.ts).
    const accountRoles = resourcesOfType(deployment, 'AWS::ApiGateway::Account').map(
      (account) =>
        (account.resource.Properties.CloudWatchRoleArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
    );
    const withManagedPolicies = resourcesOfType(deployment, 'AWS::IAM::Role').filter(
      (role) => role.resource.Properties.ManagedPolicyArns !== undefined,
    );

    expect(accountRoles).toHaveLength(1);
    expect(withManagedPolicies.map((role) => role.id)).toEqual(accountRoles);
  });

  it('writes JSON access logs and throttles on the $default stage', () => {
    // The HTTP API's stage (the WebSocket API's is in test/infra/live.test.ts).
    const stages = resourcesOfType(deployment, 'AWS::ApiGatewayV2::Stage').filter(
      (stage) => describeReference(stage.resource.Properties.ApiId, stage.stack) === 'api Ref',
    );
    expect(stages).toHaveLength(1);
    const stage = stages[0].resource.Properties;
    const accessLogs = stage.AccessLogSettings as { DestinationArn: unknown; Format: string };

    expect(stage.StageName).toBe('$default');
    expect(stage.AutoDeploy).toBe(true);
    expect(describeReference(accessLogs.DestinationArn, deployment.parent)).toBe('log group');
    expect(JSON.parse(accessLogs.Format)).toMatchObject({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      routeKey: '$context.routeKey',
      status: '$context.status',
      latency: '$context.responseLatency',
    });
    expect(stage.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
  });

  it('outputs the API URL and the table name', () => {
    deployment.parent.template.hasOutput('ApiUrl', {});
    deployment.parent.template.hasOutput('TableName', {});
  });

  it('refuses a limit on a path that is not in the route table', () => {
    const withoutAskAi = routes.filter((route) => route.path !== '/v2/rewriter/ask-ai');

    expect(() => synthesize({ routes: withoutAskAi })).toThrow(
      /limits \/v2\/rewriter\/ask-ai, which is not in the route table/,
    );
  });
});
