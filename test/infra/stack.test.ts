/**
 * The synthesized CloudFormation template: one function and one POST route per route-table entry, the table and
 * key settings the design relies on, and grants that follow each route's entry and nothing more. Bundling is
 * skipped (`aws:cdk:bundling-stacks: []`) so that the template is built in seconds.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CollabStack, type CollabStackProps } from '../../infra/stack';
import { GLOBAL_INDEXES, PARTITION_KEY, SORT_KEY, TTL_ATTRIBUTE, projectionOf } from '../../shared/db/table-definition';
import { routes, type Route } from '../../shared/routes';
import { documentMigrationWorker, workers } from '../../shared/workers';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}

interface Statement {
  readonly Effect: string;
  readonly Action: string | readonly string[];
  readonly Resource: unknown;
}

function synthesize(props?: CollabStackProps): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new CollabStack(app, 'CollabTest', props));
}

const template = synthesize();
const resources: Record<string, CfnResource> = template.toJSON().Resources;

function resourcesOfType(type: string): [string, CfnResource][] {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

/** Route functions are told apart by their description, `POST <path>`. */
function functionOf(path: string): [string, CfnResource] {
  const found = resourcesOfType('AWS::Lambda::Function').filter(
    ([, resource]) => resource.Properties.Description === `POST ${path}`,
  );
  expect(found).toHaveLength(1);
  return found[0];
}

/** Workers are told apart by their description, the worker table's summary. */
function workerFunction(summary: string): [string, CfnResource] {
  const found = resourcesOfType('AWS::Lambda::Function').filter(([, resource]) => resource.Properties.Description === summary);
  expect(found).toHaveLength(1);
  return found[0];
}

function notRoutedFunction(): [string, CfnResource] {
  const workerSummaries = new Set(workers.map((worker) => worker.summary));
  const found = resourcesOfType('AWS::Lambda::Function').filter(
    ([, resource]) => !String(resource.Properties.Description).startsWith('POST ') && !workerSummaries.has(String(resource.Properties.Description)),
  );
  expect(found).toHaveLength(1);
  return found[0];
}

function environmentOf([, fn]: [string, CfnResource]): Record<string, unknown> {
  const environment = fn.Properties.Environment as { Variables: Record<string, unknown> };
  return environment.Variables;
}

/** Every statement of every policy attached to the function's role. */
function statementsOf([, fn]: [string, CfnResource]): Statement[] {
  const role = fn.Properties.Role as { 'Fn::GetAtt': [string, string] };
  const roleId = role['Fn::GetAtt'][0];
  return resourcesOfType('AWS::IAM::Policy')
    .filter(([, policy]) => JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]))
    .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

function actionsOf(fn: [string, CfnResource]): string[] {
  return statementsOf(fn)
    .filter((statement) => statement.Effect === 'Allow')
    .flatMap((statement) => (typeof statement.Action === 'string' ? [statement.Action] : [...statement.Action]));
}

function actionsOfService(fn: [string, CfnResource], service: string): string[] {
  return actionsOf(fn).filter((action) => action.startsWith(`${service}:`));
}

const routeCases = routes.map((route: Route) => [route.path, route] as const);

describe('the CDK stack', () => {
  it('makes one function per route plus the $default one and one per worker, never sharing a function between paths', () => {
    const functions = resourcesOfType('AWS::Lambda::Function');

    expect(functions).toHaveLength(routes.length + 1 + workers.length);
    expect(new Set(routes.map((route) => functionOf(route.path)[0])).size).toBe(routes.length);
  });

  it.each(routeCases)('%s: function on nodejs22.x, arm64, traced, with its environment', (path, route) => {
    const fn = functionOf(path);
    const environment = environmentOf(fn);

    expect(fn[1].Properties).toMatchObject({
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

  it.each(routeCases)('%s: routed as POST to its own function', (path) => {
    const [functionId] = functionOf(path);
    const routeResources = resourcesOfType('AWS::ApiGatewayV2::Route').filter(
      ([, route]) => route.Properties.RouteKey === `POST ${path}`,
    );
    expect(routeResources).toHaveLength(1);
    const target = routeResources[0][1].Properties.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
    const integrationId = target['Fn::Join'][1][1].Ref;

    expect(resources[integrationId].Properties).toMatchObject({
      IntegrationType: 'AWS_PROXY',
      IntegrationUri: { 'Fn::GetAtt': [functionId, 'Arn'] },
    });
  });

  it('sends every other request to the not-routed function, which has no data access', () => {
    const fn = notRoutedFunction();
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });

    expect(Object.keys(environmentOf(fn)).sort()).toEqual(['LOG_LEVEL', 'NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME']);
    expect(actionsOf(fn).filter((action) => !/^(logs|xray):/.test(action))).toEqual([]);
  });

  it('wakes the migration worker from the table stream for active migration items only, retrying failed records', () => {
    const [functionId, fn] = workerFunction(documentMigrationWorker.summary);
    const mappings = resourcesOfType('AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => JSON.stringify(mapping.Properties.FunctionName) === JSON.stringify({ Ref: functionId }),
    );
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0][1].Properties;
    const filters = (mapping.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters.map((filter) => JSON.parse(filter.Pattern));

    expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Timeout: 900 });
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [expect.stringMatching(/^Table/), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/DeadLetters/), 'Arn'] } } },
    });
    expect(filters).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { NewImage: { recordType: { S: ['documentMigration'] }, status: { S: ['pending', 'in_progress'] } } },
      },
    ]);
  });

  it('lets the migration worker read and write the table, with no key access and only its own settings', () => {
    const fn = workerFunction(documentMigrationWorker.summary);

    expect(actionsOfService(fn, 'dynamodb')).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:BatchWriteItem', 'dynamodb:GetRecords']));
    expect(actionsOfService(fn, 'kms')).toEqual([]);
    expect(Object.keys(environmentOf(fn)).sort()).toEqual(['LOG_LEVEL', 'NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME', 'TABLE_NAME']);
  });

  it('passes the workspace creation limit from the stack props', () => {
    const limited = synthesize({ workspaceCreateLimitPerHour: 3 });

    limited.hasResourceProperties('AWS::Lambda::Function', {
      Description: 'POST /v2/workspace/create',
      Environment: { Variables: Match.objectLike({ WORKSPACE_CREATE_LIMIT_PER_HOUR: '3' }) },
    });
  });

  const AI_VARIABLES = ['OPENAI_BASE_URL', 'ANTHROPIC_BASE_URL', 'GEMINI_BASE_URL'];

  it('sets no AI base URL by default, so Ask AI uses the providers\' public endpoints', () => {
    for (const route of routes) {
      expect(Object.keys(environmentOf(functionOf(route.path))).filter((name) => AI_VARIABLES.includes(name))).toEqual([]);
    }
  });

  it('passes the AI base URLs that are set to the functions that call the providers, and to no other', () => {
    const pointed = synthesize({ aiBaseUrls: { openai: 'https://proxy.example/v1', gemini: 'https://gemini.example' } });
    const variables = (path: string) => {
      const found = pointed
        .findResources('AWS::Lambda::Function', { Properties: { Description: `POST ${path}` } });
      const [fn] = Object.values(found) as CfnResource[];
      return (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    };

    for (const route of routes) {
      const set = Object.entries(variables(route.path)).filter(([name]) => AI_VARIABLES.includes(name));
      expect(Object.fromEntries(set)).toEqual(
        route.path === '/v2/rewriter/ask-ai' ? { OPENAI_BASE_URL: 'https://proxy.example/v1', GEMINI_BASE_URL: 'https://gemini.example' } : {},
      );
    }
  });

  it('refuses an AI base URL that is not an http(s) URL at synthesis', () => {
    expect(() => synthesize({ aiBaseUrls: { anthropic: 'api.anthropic.com' } })).toThrow(/anthropic base URL must be an http\(s\) URL/);
  });

  it('builds the table from the shared definition: on-demand, PITR, TTL, stream, deletion protection', () => {
    template.hasResource('AWS::DynamoDB::Table', {
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
    const [, table] = resourcesOfType('AWS::DynamoDB::Table')[0];
    const indexes = table.Properties.GlobalSecondaryIndexes as Array<{ IndexName: string; Projection: { ProjectionType: string; NonKeyAttributes?: string[] } }>;

    expect(indexes.find((index) => index.IndexName === 'gsi5')?.Projection).toEqual({
      ProjectionType: 'INCLUDE',
      NonKeyAttributes: ['judgment', 'judgedText', 'judgmentReason', 'userId', 'timestamp', 'documentId'],
    });
    expect(indexes.filter((index) => index.Projection.ProjectionType === 'ALL').map((index) => index.IndexName)).toEqual(['gsi1', 'gsi2', 'gsi3', 'gsi4']);
  });

  it('rotates the KMS key and keeps it when the stack goes', () => {
    template.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ EnableKeyRotation: true }),
    });
    template.resourceCountIs('AWS::KMS::Alias', 1);
  });

  it.each(routeCases)('%s: table grants follow the route (read-only routes cannot write)', (path, route) => {
    const dynamodb = actionsOfService(functionOf(path), 'dynamodb');

    expect(dynamodb).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
    if (route.table === 'read') {
      const writes = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
      expect(dynamodb.filter((action) => writes.includes(action))).toEqual([]);
    } else {
      expect(dynamodb).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem']));
    }
  });

  it.each(routeCases)('%s: KMS actions are exactly what the Encryption SDK needs for the route', (path, route) => {
    const kmsUse = route.kms ?? [];
    const expected = [
      ...(kmsUse.includes('encrypt') ? ['kms:GenerateDataKey'] : []),
      ...(kmsUse.includes('decrypt') ? ['kms:Decrypt'] : []),
    ];

    expect(actionsOfService(functionOf(path), 'kms').sort()).toEqual(expected.sort());
  });

  it('creates no Secrets Manager secret and grants no secret access (the page-token key lives in the table)', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    for (const route of routes) expect(actionsOfService(functionOf(route.path), 'secretsmanager')).toEqual([]);
  });

  it('gives every function its own log group with one month of retention', () => {
    for (const [, fn] of resourcesOfType('AWS::Lambda::Function')) {
      const logGroup = (fn.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;

      expect(resources[logGroup]).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 30 } });
    }
  });

  it('uses no AWS managed policies (each role writes to its own log group only)', () => {
    for (const [, role] of resourcesOfType('AWS::IAM::Role')) {
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('writes JSON access logs and throttles on the $default stage', () => {
    const stages = resourcesOfType('AWS::ApiGatewayV2::Stage');
    expect(stages).toHaveLength(1);
    const stage = stages[0][1].Properties;
    const accessLogs = stage.AccessLogSettings as {
      DestinationArn: { 'Fn::GetAtt': [string, string] };
      Format: string;
    };

    expect(stage.StageName).toBe('$default');
    expect(resources[accessLogs.DestinationArn['Fn::GetAtt'][0]].Type).toBe('AWS::Logs::LogGroup');
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
    template.hasOutput('ApiUrl', {});
    template.hasOutput('TableName', {});
  });
});
