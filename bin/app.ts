/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy`. No `env` on the stack, so it synthesizes without AWS
 * credentials (environment-agnostic) and deploys to whatever account and region the CLI is pointed at.
 *
 * cdk-nag's AwsSolutions pack runs as a validation plugin (cdk-nag v3 replaced the v2 Aspect with CDK's policy
 * validation): every unacknowledged finding, error or warning, fails the synthesis.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CollabStack } from '../infra/stack';

const app = new App();

/** `-c stage=dev`: a string, or undefined when not given. */
function stringContext(name: string): string | undefined {
  const value: unknown = app.node.tryGetContext(name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`Context ${name} must be a non-empty string.`);
  return value;
}

/** `-c workspaceCreateLimitPerHour=20` (a string) or a number in cdk.json; undefined when not given. */
function integerContext(name: string): number | undefined {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`Context ${name} must be a non-negative integer, got ${JSON.stringify(raw)}.`);
  }
  return value;
}

new CollabStack(app, 'CollabBackend', {
  description: 'Collaboration backend: HTTP API, one Lambda per POST path, one DynamoDB table, KMS',
  stage: stringContext('stage'),
  workspaceCreateLimitPerHour: integerContext('workspaceCreateLimitPerHour'),
  // -c openaiBaseUrl=https://proxy.example/v1 and likewise; unset: the providers' public endpoints.
  aiBaseUrls: {
    openai: stringContext('openaiBaseUrl'),
    anthropic: stringContext('anthropicBaseUrl'),
    gemini: stringContext('geminiBaseUrl'),
  },
});

// writeSuppressionsToCloudFormation keeps every acknowledgment and its reason in the template, for review.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));

app.synth();
