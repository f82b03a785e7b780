/**
 * cdk-nag's AwsSolutions pack over the app, wired as bin/app.ts wires it. cdk-nag v3 is a CDK validation plugin:
 * its findings come back as a report (not as stack annotations), and any unacknowledged finding fails
 * `cdk synth`. The plugin walks the whole construct tree from the app, nested stacks included (checked below, so
 * that a cdk-nag change that stopped at stack boundaries would not go unnoticed). Acknowledgments are kept few and
 * each one must say why.
 */
import { NestedStack, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { addNagChecks, buildApp } from '../../../infra/app';
import { describeReference, templatesOf, testApp } from '../templates';

interface Acknowledgment {
  readonly id: string;
  readonly reason: string;
}

interface CdkNagMetadata {
  readonly cdk_nag?: { readonly rules_to_suppress: readonly Acknowledgment[] };
}

const app = testApp();
const stack = buildApp(app);
const pack = addNagChecks(app);

// The pack's own entry point for a construct tree: the same findings `cdk synth` would report, as data.
const violations = pack.validateScope(app).violations;

function findings(severity: string): string[] {
  return violations
    .filter((violation) => violation.severity === severity)
    .flatMap((violation) =>
      violation.violatingResources.map((resource) => `${violation.ruleName} at ${resource.constructPath ?? '?'}`),
    );
}

function acknowledgmentsInTemplates(): Acknowledgment[] {
  // Synthesizing runs the registered plugin too: it throws on any unacknowledged finding.
  return templatesOf(stack).all.flatMap((template) =>
    Object.values(template.resources).flatMap(
      (resource) => (resource.Metadata as CdkNagMetadata | undefined)?.cdk_nag?.rules_to_suppress ?? [],
    ),
  );
}

describe('cdk-nag AwsSolutions', () => {
  it('checks the resources of nested stacks, not only the parent stack', () => {
    const probe = testApp();
    const nested = new NestedStack(new Stack(probe, 'Parent'), 'Nested');
    new sqs.Queue(nested, 'UnencryptedQueue', { encryption: sqs.QueueEncryption.UNENCRYPTED });

    const probed = addNagChecks(probe).validateScope(probe).violations;

    expect(
      probed.flatMap((violation) => violation.violatingResources.map((resource) => resource.constructPath)),
    ).toContain('Parent/Nested/UnencryptedQueue/Resource');
  });

  it('reports no unacknowledged errors in the stack or its nested stacks', () => {
    expect(findings('error')).toEqual([]);
  });

  it('reports no unacknowledged warnings in the stack or its nested stacks', () => {
    expect(findings('warning')).toEqual([]);
  });

  it('acknowledges only the expected rules, each with a reason of at least 20 characters', () => {
    const acknowledgments = acknowledgmentsInTemplates();
    const ids = [...new Set(acknowledgments.map((acknowledgment) => acknowledgment.id))].sort();

    expect(ids).toEqual([
      'AwsSolutions-APIG4',
      // API Gateway's account-level logging role carries AWS's policy for it (infra/api-gateway-account.ts).
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'AwsSolutions-IAM5[Resource::*]',
      // The Provider framework may invoke the deploy task's handler and its qualified versions (`<arn>:*`).
      expect.stringMatching(/^AwsSolutions-IAM5\[Resource::<ServerSecretsHandlerFunction[0-9A-F]{8}\.Arn>:\*\]$/),
      // ManageConnections on the live WebSocket API's stage (dev): connection ids exist only at run time. In the nested
      // stacks the API id is the LiveApiId parameter; in the parent (the migration worker), the API's logical id.
      ...['DELETE', 'GET', 'POST'].map((method) =>
        expect.stringMatching(
          new RegExp(
            `^AwsSolutions-IAM5\\[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<LiveApi[0-9A-F]{8}>/dev/${method}/@connections/\\*\\]$`,
          ),
        ),
      ),
      ...['DELETE', 'GET', 'POST'].map(
        (method) =>
          `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<LiveApiId>/dev/${method}/@connections/*]`,
      ),
      'AwsSolutions-L1',
      'AwsSolutions-SQS3',
    ]);
    for (const acknowledgment of acknowledgments) {
      expect(acknowledgment.reason.trim().length).toBeGreaterThanOrEqual(20);
    }
  });

  it("acknowledges the missing authorizer of the WebSocket API's $connect for its session token, and of $default and $disconnect because API Gateway authorizes on $connect only", () => {
    const webSocketRoutes = templatesOf(stack).all.flatMap((template) =>
      Object.values(template.resources).filter(
        (resource) =>
          resource.Type === 'AWS::ApiGatewayV2::Route' &&
          describeReference(resource.Properties.ApiId, template) === 'websocket api Ref',
      ),
    );
    const reasonFor = (routeKey: string) =>
      webSocketRoutes
        .filter((route) => route.Properties.RouteKey === routeKey)
        .flatMap((route) => (route.Metadata as CdkNagMetadata | undefined)?.cdk_nag?.rules_to_suppress ?? [])
        .filter((acknowledgment) => acknowledgment.id === 'AwsSolutions-APIG4')
        .map((acknowledgment) => acknowledgment.reason);

    expect(reasonFor('$connect')).toEqual([expect.stringContaining('signed session token in the query string')]);
    expect(reasonFor('$default')).toEqual([expect.stringContaining('authorize on $connect only')]);
    expect(reasonFor('$disconnect')).toEqual([expect.stringContaining('authorize on $connect only')]);
  });
});
