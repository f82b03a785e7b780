/**
 * The app as `cdk synth` / `cdk deploy` build it from their context (infra/app.ts): the stage names the stack,
 * a bare command lands on dev, two stages can share an account, and every context flag reaches the stack.
 */
import { buildApp } from '../../../infra/app';
import { type Deployment, environmentOf, functionOf, resourcesOfType, templatesOf, testApp } from '../templates';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:collab-alarms';

/** Properties that give a resource a fixed name in the account and region (unset ones get a generated name). */
const NAME_PROPERTIES = [
  'AliasName',
  'Name',
  'FunctionName',
  'AlarmName',
  'LogGroupName',
  'QueueName',
  'TopicName',
  'RoleName',
  'TableName',
  'StackName',
];

function fixedNames(deployment: Deployment): Set<string> {
  return new Set(
    deployment.all.flatMap((stack) =>
      Object.values(stack.resources).flatMap((resource) =>
        NAME_PROPERTIES.map((property) => resource.Properties?.[property]).filter(
          (value): value is string => typeof value === 'string',
        ),
      ),
    ),
  );
}

function synthesizedStackNames(context: Record<string, unknown>): { names: string[]; deployment: Deployment } {
  const app = testApp(context);
  const stack = buildApp(app);
  return { names: app.synth().stacks.map((artifact) => artifact.stackName), deployment: templatesOf(stack) };
}

const staging = synthesizedStackNames({
  stage: 'staging',
  workspaceCreateLimitPerHour: '7',
  openaiBaseUrl: 'https://proxy.example/v1',
});
const preview = synthesizedStackNames({ stage: 'pr-42', reserveConcurrency: 'true', alarmTopicArn: TOPIC });

describe('the CDK app', () => {
  it('deploys stage dev as CollabBackend-dev when no stage is given', () => {
    const stack = buildApp(testApp());

    expect([stack.node.id, stack.stackName]).toEqual(['CollabBackend-dev', 'CollabBackend-dev']);
  });

  it('synthesizes one stack named after the stage for each stage', () => {
    expect([staging.names, preview.names]).toEqual([['CollabBackend-staging'], ['CollabBackend-pr-42']]);
  });

  it('gives two stages in one account and region no fixed resource name in common', () => {
    const stagingNames = fixedNames(staging.deployment);
    const previewNames = fixedNames(preview.deployment);

    expect(stagingNames).toContain('alias/collab-backend/staging/secrets');
    expect(previewNames).toContain('collab-backend-pr-42');
    expect([...stagingNames].filter((name) => previewNames.has(name))).toEqual([]);
  });

  it.each(['prod_1', 'a'.repeat(33), 'dev stage', ''])('refuses the stage %j', (stage) => {
    expect(() => buildApp(testApp({ stage }))).toThrow(/must be|non-empty string/);
  });

  it('passes workspaceCreateLimitPerHour and the AI base URLs from the context', () => {
    expect(environmentOf(functionOf(staging.deployment, '/v2/workspace/create'))).toMatchObject({
      WORKSPACE_CREATE_LIMIT_PER_HOUR: '7',
    });
    expect(environmentOf(functionOf(staging.deployment, '/v2/rewriter/ask-ai'))).toMatchObject({
      OPENAI_BASE_URL: 'https://proxy.example/v1',
    });
  });

  it('reserves no concurrency by default (or with -c reserveConcurrency=false), and reserves some with -c reserveConcurrency=true', () => {
    const reserved = (deployment: Deployment) =>
      resourcesOfType(deployment, 'AWS::Lambda::Function').filter(
        (fn) => fn.resource.Properties.ReservedConcurrentExecutions !== undefined,
      ).length;
    const explicitlyOff = templatesOf(buildApp(testApp({ reserveConcurrency: 'false' })));

    expect([reserved(staging.deployment), reserved(explicitlyOff), reserved(preview.deployment) > 0]).toEqual([
      0,
      0,
      true,
    ]);
  });

  it('sends alarms to -c alarmTopicArn, and nowhere without it', () => {
    const actions = (deployment: Deployment) =>
      new Set(
        resourcesOfType(deployment, 'AWS::CloudWatch::Alarm').map((alarm) =>
          JSON.stringify(alarm.resource.Properties.AlarmActions ?? null),
        ),
      );

    expect([actions(staging.deployment), actions(preview.deployment)]).toEqual([
      new Set(['null']),
      new Set([JSON.stringify([TOPIC])]),
    ]);
  });

  it("sets API Gateway's account-level logging role by default (and with -c apiGatewayCloudWatchRole=true), and leaves it to the account with -c apiGatewayCloudWatchRole=false", () => {
    const accounts = (context: Record<string, unknown>) =>
      resourcesOfType(templatesOf(buildApp(testApp(context))), 'AWS::ApiGateway::Account').length;

    expect([
      accounts({}),
      accounts({ apiGatewayCloudWatchRole: 'true' }),
      accounts({ apiGatewayCloudWatchRole: 'false' }),
      accounts({ apiGatewayCloudWatchRole: false }),
    ]).toEqual([1, 1, 0, 0]);
  });

  it.each([
    ['reserveConcurrency', 'no'],
    ['apiGatewayCloudWatchRole', 'off'],
    ['workspaceCreateLimitPerHour', '-1'],
    ['alarmTopicArn', 'alerts'],
  ])('refuses -c %s=%s', (name, value) => {
    expect(() => buildApp(testApp({ [name]: value }))).toThrow(
      new RegExp(name === 'alarmTopicArn' ? 'SNS topic ARN' : name),
    );
  });
});
