/**
 * Reads a synthesized deployment as the infra tests need it: the parent template and every nested stack's, with
 * references into the parent (nested-stack parameters) followed back to what they name. Bundling is skipped
 * (`aws:cdk:bundling-stacks: []`) so that a deployment is built in seconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CollabStack, type CollabStackProps } from '../../infra/stack';
import { routes, type Route } from '../../shared/routes';

export interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly DependsOn?: string | readonly string[];
  readonly DeletionPolicy?: string;
  readonly Metadata?: Record<string, unknown>;
}

export interface Statement {
  readonly Effect: string;
  readonly Action: string | readonly string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

export interface StackTemplate {
  /** The construct id: the stack's for the parent, e.g. `WorkspaceRoutes` for a nested stack. */
  readonly name: string;
  readonly template: Template;
  readonly resources: Record<string, CfnResource>;
  /** For a nested stack: what the parent passes for each of its parameters. */
  readonly parameterValues: Record<string, unknown>;
  readonly parent?: StackTemplate;
}

/** One resource and the stack it is in. */
export interface Located {
  readonly stack: StackTemplate;
  readonly id: string;
  readonly resource: CfnResource;
}

export interface Deployment {
  readonly stack: CollabStack;
  readonly parent: StackTemplate;
  readonly nested: readonly StackTemplate[];
  /** The parent, then every nested stack. */
  readonly all: readonly StackTemplate[];
}

/**
 * Bundling skipped; version reporting on, as `cdk synth` and `cdk deploy` have it, so that every template carries
 * the CDKMetadata resource it has when deployed and resource counts match the real ones.
 */
const TEST_CONTEXT = { 'aws:cdk:bundling-stacks': [], 'aws:cdk:version-reporting': true };

/** The assembly folders of the apps made here, removed once the test file's tests have run. */
const outdirs: string[] = [];
afterAll(() => {
  for (const outdir of outdirs.splice(0)) rmSync(outdir, { recursive: true, force: true });
});

/**
 * A new app (bundling skipped) with the given context, synthesizing into a temporary folder of its own that the file
 * removes when it ends (CDK's default, a new `cdk.out*` folder per app in the system's temporary folder, is never
 * removed: hundreds of them per run, in memory where that folder is tmpfs).
 */
export function testApp(context: Record<string, unknown> = {}): App {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk.out'));
  outdirs.push(outdir);
  return new App({ outdir, context: { ...TEST_CONTEXT, ...context } });
}

function parentTemplate(stack: Stack): StackTemplate {
  const template = Template.fromStack(stack);
  return { name: stack.node.id, template, resources: template.toJSON().Resources, parameterValues: {} };
}

function nestedTemplate(nested: NestedStack, parent: StackTemplate): StackTemplate {
  const template = Template.fromStack(nested);
  const stackResource = nested.nestedStackResource;
  const parentStack = nested.nestedStackParent;
  if (stackResource === undefined || parentStack === undefined)
    throw new Error(`${nested.node.path} has no stack resource in a parent.`);
  const parentResource = parent.resources[parentStack.getLogicalId(stackResource)];
  return {
    name: nested.node.id,
    template,
    resources: template.toJSON().Resources,
    parameterValues: (parentResource.Properties.Parameters as Record<string, unknown> | undefined) ?? {},
    parent,
  };
}

/** Every template of a CollabStack already in an app. */
export function templatesOf(stack: CollabStack): Deployment {
  const parent = parentTemplate(stack);
  const nested = stack.nestedStacks.map((nestedStack) => nestedTemplate(nestedStack, parent));
  return { stack, parent, nested, all: [parent, ...nested] };
}

/** The deployment with default props, made once and shared by the modules that read it (they only read it). */
let defaultDeployment: Deployment | undefined;

/**
 * Synthesizes a CollabStack on its own (bundling skipped). Without props, the one default deployment: seven modules of
 * the infra tier read it, and each synthesis takes seconds.
 */
export function synthesize(props?: CollabStackProps): Deployment {
  if (props !== undefined) return templatesOf(new CollabStack(testApp(), 'CollabTest', props));
  defaultDeployment ??= templatesOf(new CollabStack(testApp(), 'CollabTest'));
  return defaultDeployment;
}

/** Every resource of the deployment of the given type, in any stack. */
export function resourcesOfType(deployment: Deployment, type: string): Located[] {
  return deployment.all.flatMap((stack) =>
    Object.entries(stack.resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([id, resource]) => ({ stack, id, resource })),
  );
}

/** The one function with this description (`POST <path>` for routes, the table's summary otherwise). */
export function functionWithDescription(deployment: Deployment, description: string): Located {
  const found = resourcesOfType(deployment, 'AWS::Lambda::Function').filter(
    (fn) => fn.resource.Properties.Description === description,
  );
  if (found.length !== 1) throw new Error(`Expected one function described "${description}", found ${found.length}.`);
  return found[0];
}

export function functionOf(deployment: Deployment, path: string): Located {
  return functionWithDescription(deployment, `POST ${path}`);
}

export function environmentOf(fn: Located): Record<string, unknown> {
  return (fn.resource.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

/** Every statement of every policy attached to the function's role. */
export function statementsOf(fn: Located): Statement[] {
  const roleId = (fn.resource.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return Object.values(fn.stack.resources)
    .filter(
      (policy) =>
        policy.Type === 'AWS::IAM::Policy' &&
        JSON.stringify(policy.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
    )
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

const RESOURCE_NAMES: Record<string, string> = {
  'AWS::DynamoDB::Table': 'table',
  'AWS::KMS::Key': 'key',
  'AWS::Logs::LogGroup': 'log group',
  'AWS::SQS::Queue': 'queue',
  'AWS::Lambda::Function': 'function',
  'AWS::ApiGatewayV2::Api': 'api',
};

/** The name describeReference gives a resource: the HTTP API is `api`, the live-sync WebSocket API `websocket api`. */
function resourceName(resource: CfnResource | undefined): string | undefined {
  if (resource?.Type === 'AWS::ApiGatewayV2::Api' && resource.Properties.ProtocolType === 'WEBSOCKET')
    return 'websocket api';
  return resource === undefined ? undefined : RESOURCE_NAMES[resource.Type];
}

/**
 * What an IAM resource (or any reference) names, read across the nested-stack boundary: `table`,
 * `table/index/gsi1`, `table StreamArn`, `key`, `log group`, `*`, `<AWS::Region>` (a pseudo parameter), ...
 */
export function describeReference(value: unknown, stack: StackTemplate): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) throw new Error(`Cannot describe ${JSON.stringify(value)}.`);
  if ('Ref' in value && typeof value.Ref === 'string') {
    const passed = stack.parameterValues[value.Ref];
    if (passed !== undefined && stack.parent !== undefined) return describeReference(passed, stack.parent);
    if (value.Ref.startsWith('AWS::')) return `<${value.Ref}>`;
    return `${resourceName(stack.resources[value.Ref]) ?? value.Ref} Ref`;
  }
  if ('Fn::GetAtt' in value && Array.isArray(value['Fn::GetAtt'])) {
    const [id, attribute] = value['Fn::GetAtt'] as [string, string];
    const name = resourceName(stack.resources[id]) ?? id;
    return attribute === 'Arn' ? name : `${name} ${attribute}`;
  }
  if ('Fn::Join' in value && Array.isArray(value['Fn::Join'])) {
    const [separator, parts] = value['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => describeReference(part, stack)).join(separator);
  }
  throw new Error(`Cannot describe ${JSON.stringify(value)}.`);
}

/** The function's allowed actions as `<action> on <resource>`, sorted. */
export function grantsOf(fn: Located): string[] {
  return statementsOf(fn)
    .filter((statement) => statement.Effect === 'Allow')
    .flatMap((statement) => {
      const actions = typeof statement.Action === 'string' ? [statement.Action] : [...statement.Action];
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      const condition = describeCondition(statement.Condition);
      return actions.flatMap((action) =>
        resources.map((resource: unknown) => `${action} on ${describeReference(resource, fn.stack)}${condition}`),
      );
    })
    .sort();
}

/** ` where <key> like <values>` for the one condition form the stack uses (StringLike on dynamodb:LeadingKeys). */
function describeCondition(condition: unknown): string {
  if (condition === undefined) return '';
  const clauses = Object.values(condition as Record<string, Record<string, string | string[]>>).flatMap((byKey) =>
    Object.entries(byKey).map(([name, values]) => `${name} like ${[values].flat().join('|')}`),
  );
  return ` where ${clauses.join(' and ')}`;
}

/** Only the grants of the given services (`dynamodb`, `kms`, ...). */
export function grantsOfServices(fn: Located, ...services: string[]): string[] {
  return grantsOf(fn).filter((grant) => services.some((service) => grant.startsWith(`${service}:`)));
}

/** `count` copies of existing routes under new paths in `areas` (round robin), each with its original handler. */
export function extraRoutes(count: number, areas: readonly string[], extra: Partial<Route> = {}): Route[] {
  return Array.from({ length: count }, (_, i) => ({
    ...routes[i % routes.length],
    ...extra,
    path: `/v2/${areas[i % areas.length]}/extra-${i}`,
  }));
}
