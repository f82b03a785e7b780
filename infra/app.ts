/**
 * The CDK app, from its context: one stack per stage, `CollabBackend-<stage>`. bin/app.ts calls this for
 * `cdk synth` / `cdk deploy`; the infra tests call it with a context of their own to see what a given command line
 * would deploy.
 *
 * Context (`-c name=value`, or cdk.json):
 * - stage (default dev): names the stack and everything named after it; a bare `cdk deploy` never lands on prod;
 * - workspaceCreateLimitPerHour (default 10): Create Workspace calls per source IP per hour, 0 disables;
 * - openaiBaseUrl, anthropicBaseUrl, geminiBaseUrl (default: the providers' public endpoints);
 * - reserveConcurrency (default false): true reserves the concurrency of infra/limits.ts (needs a Lambda concurrency
 *   quota of the reservations' total + 100; a new account often has 10);
 * - alarmTopicArn (default none): SNS topic every alarm notifies;
 * - webhookAllowPrivateUrls (default false): webhook destinations may be private, loopback or link-local addresses;
 * - sesIdentity (default none): the verified SES identity (domain or address) the default email transport sends from;
 *   without it no function may send through SES;
 * - sesConfigurationSet (default none): the SES configuration set those emails are sent with;
 * - sesIdentityArn (default none): sending authorization, the ARN of another account's identity to send from;
 * - apiGatewayCloudWatchRole (default true): create API Gateway's account-level CloudWatch Logs role and set it for the
 *   account and region (the WebSocket stage's access logs need it; kept when the stack goes); false when the account's
 *   setting is managed elsewhere and already names a role;
 * - liveThrottleRate, liveThrottleBurst (default infra/limits.ts LIVE_STAGE_THROTTLE, 1,000 and 2,000): the live
 *   WebSocket stage's throttle, frames in per second and its bucket; given the rate alone, the burst is the larger of
 *   the default's and twice the rate. docs/operating.md says how to size them against the account's API Gateway quota;
 * - crdtVersionQuietSeconds, crdtVersionMaxSeconds (default 300 and 3,600): automatic versions of an editor
 *   (decisions §14), kept once it has been quiet that long, or once its oldest unversioned change is that old.
 */
import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { LIVE_STAGE_THROTTLE, type Throttle } from './limits';
import { CollabStack, DEFAULT_STAGE, assertValidStage } from './stack';

/** The stack name of a stage. */
export function stackName(stage: string): string {
  return `CollabBackend-${stage}`;
}

/** `-c stage=dev`: a string, or undefined when not given. */
function stringContext(app: App, name: string): string | undefined {
  const value: unknown = app.node.tryGetContext(name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`Context ${name} must be a non-empty string.`);
  return value;
}

/** `-c workspaceCreateLimitPerHour=20` (a string) or a number in cdk.json; undefined when not given. */
function integerContext(app: App, name: string): number | undefined {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`Context ${name} must be a non-negative integer, got ${JSON.stringify(raw)}.`);
  }
  return value;
}

/** `-c reserveConcurrency=true` (a string) or a boolean in cdk.json; undefined when not given. */
function booleanContext(app: App, name: string): boolean | undefined {
  const raw: unknown = app.node.tryGetContext(name);
  if (raw === undefined) return undefined;
  if (raw === true || raw === 'true') return true;
  if (raw === false || raw === 'false') return false;
  throw new Error(`Context ${name} must be true or false, got ${JSON.stringify(raw)}.`);
}

/**
 * `-c liveThrottleRate=3000 -c liveThrottleBurst=6000`: the live stage's throttle, undefined when neither is given
 * (the default). Each at least 1: a rate of 0 would refuse every frame.
 */
export function liveThrottleContext(app: App): Throttle | undefined {
  const rate = integerContext(app, 'liveThrottleRate');
  const burst = integerContext(app, 'liveThrottleBurst');
  if (rate === undefined && burst === undefined) return undefined;
  for (const [name, value] of [
    ['liveThrottleRate', rate],
    ['liveThrottleBurst', burst],
  ] as const) {
    if (value === 0)
      throw new Error(`Context ${name} must be at least 1 (0 would refuse every frame of the live API).`);
  }
  const rateLimit = rate ?? LIVE_STAGE_THROTTLE.rateLimit;
  return { rateLimit, burstLimit: burst ?? Math.max(LIVE_STAGE_THROTTLE.burstLimit, 2 * rateLimit) };
}

/** Adds the stack of the stage named by the app's context. Throws on a context value it cannot use. */
export function buildApp(app: App): CollabStack {
  const stage = stringContext(app, 'stage') ?? DEFAULT_STAGE;
  // Checked before it becomes the stack id, so a bad stage fails with the stage's own message.
  assertValidStage(stage);
  const name = stackName(stage);
  return new CollabStack(app, name, {
    stackName: name,
    description: `Collaboration backend (${stage}): HTTP API, one Lambda per POST path, WebSocket API for live sync, one DynamoDB table, KMS`,
    stage,
    workspaceCreateLimitPerHour: integerContext(app, 'workspaceCreateLimitPerHour'),
    // -c openaiBaseUrl=https://proxy.example/v1 and likewise; unset: the providers' public endpoints.
    aiBaseUrls: {
      openai: stringContext(app, 'openaiBaseUrl'),
      anthropic: stringContext(app, 'anthropicBaseUrl'),
      gemini: stringContext(app, 'geminiBaseUrl'),
    },
    reserveConcurrency: booleanContext(app, 'reserveConcurrency'),
    alarmTopicArn: stringContext(app, 'alarmTopicArn'),
    webhookAllowPrivateUrls: booleanContext(app, 'webhookAllowPrivateUrls'),
    apiGatewayCloudWatchRole: booleanContext(app, 'apiGatewayCloudWatchRole'),
    liveThrottle: liveThrottleContext(app),
    crdtVersionQuietSeconds: integerContext(app, 'crdtVersionQuietSeconds'),
    crdtVersionMaxSeconds: integerContext(app, 'crdtVersionMaxSeconds'),
    // Checked by the stack (infra/ses.ts): shapes, and that they name one identity.
    ses: {
      identity: stringContext(app, 'sesIdentity'),
      configurationSet: stringContext(app, 'sesConfigurationSet'),
      identityArn: stringContext(app, 'sesIdentityArn'),
    },
  });
}

/**
 * cdk-nag's AwsSolutions pack as a validation plugin (cdk-nag v3 replaced the v2 Aspect with CDK's policy
 * validation): every unacknowledged finding, error or warning, in the stack or any nested stack, fails the
 * synthesis. writeSuppressionsToCloudFormation keeps every acknowledgment and its reason in the templates, for review.
 */
export function addNagChecks(app: App): AwsSolutionsChecks {
  const pack = new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true });
  Validations.of(app).addPlugins(pack);
  return pack;
}
