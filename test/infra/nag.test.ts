/**
 * cdk-nag's AwsSolutions pack over the stack, wired as bin/app.ts wires it. cdk-nag v3 is a CDK validation
 * plugin: its findings come back as a report (not as stack annotations), and any unacknowledged finding fails
 * `cdk synth`. Acknowledgments are kept few and each one must say why.
 */
import { App, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CollabStack } from '../../infra/stack';

interface Acknowledgment {
  readonly id: string;
  readonly reason: string;
}

interface CfnResourceWithMetadata {
  readonly Metadata?: { readonly cdk_nag?: { readonly rules_to_suppress: readonly Acknowledgment[] } };
}

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new CollabStack(app, 'CollabNagTest');
const pack = new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true });
Validations.of(app).addPlugins(pack);

// The pack's own entry point for a construct tree: the same findings `cdk synth` would report, as data.
const violations = pack.validateScope(app).violations;

function findings(severity: string): string[] {
  return violations
    .filter((violation) => violation.severity === severity)
    .flatMap((violation) =>
      violation.violatingResources.map((resource) => `${violation.ruleName} at ${resource.constructPath ?? '?'}`),
    );
}

function acknowledgmentsInTemplate(): Acknowledgment[] {
  // Synthesizing runs the registered plugin too: it throws on any unacknowledged finding.
  const resources: Record<string, CfnResourceWithMetadata> = Template.fromStack(stack).toJSON().Resources;
  return Object.values(resources).flatMap((resource) => resource.Metadata?.cdk_nag?.rules_to_suppress ?? []);
}

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged errors', () => {
    expect(findings('error')).toEqual([]);
  });

  it('reports no unacknowledged warnings', () => {
    expect(findings('warning')).toEqual([]);
  });

  it('acknowledges only the expected rules, each with a reason of at least 20 characters', () => {
    const acknowledgments = acknowledgmentsInTemplate();
    const ids = [...new Set(acknowledgments.map((acknowledgment) => acknowledgment.id))].sort();

    expect(ids).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-IAM5[Resource::*]',
      expect.stringMatching(/^AwsSolutions-IAM5\[Resource::<Table[0-9A-F]{8}\.Arn>\/index\/\*\]$/),
      'AwsSolutions-L1',
      'AwsSolutions-SQS3',
    ]);
    for (const acknowledgment of acknowledgments) {
      expect(acknowledgment.reason.trim().length).toBeGreaterThanOrEqual(20);
    }
  });
});
