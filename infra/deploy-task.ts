/**
 * A deploy task (shared/deploy-tasks.ts) run by CloudFormation: the task's function (the same defaults and grant
 * path as every other function), a custom-resource Provider (aws-cdk-lib/custom-resources) in front of it, and the
 * custom resource that makes CloudFormation call it when the stack is created and whenever the task changes.
 */
import { CustomResource, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import type { DeployTask } from '../shared/deploy-tasks';
import { LOG_RETENTION, ServiceFunction, type DataResources, type FunctionSettings } from './service-function';

export interface DeployTaskRunProps {
  readonly task: DeployTask;
  readonly resources: DataResources;
  readonly settings: FunctionSettings;
}

/**
 * The S3 key of a function's bundle, named by its content hash. It changes whenever the task's code changes,
 * including the list of secrets it creates (bundled from shared/), so a deployment that changes the task runs it
 * again, and one that does not leaves it alone. Tasks are idempotent, so a spurious change only costs a run.
 */
function bundleKey(fn: lambda.Function): string {
  const cfn = fn.node.defaultChild;
  if (cfn instanceof lambda.CfnFunction && 's3Key' in cfn.code && typeof cfn.code.s3Key === 'string')
    return cfn.code.s3Key;
  throw new Error(`Function ${fn.node.path} has no S3 bundle to version its deploy task by.`);
}

export class DeployTaskRun extends Construct {
  readonly handler: ServiceFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: DeployTaskRunProps) {
    super(scope, id);
    this.handler = new ServiceFunction(this, 'Handler', {
      kind: 'deployTask',
      task: props.task,
      resources: props.resources,
      settings: props.settings,
    });

    // The framework's own function (it relays CloudFormation's request to the handler and reports the answer
    // back) gets the same treatment as ours: a log group with retention instead of an implicit one that keeps
    // logs forever, and a role that may write there instead of AWSLambdaBasicExecutionRole.
    const frameworkLogs = new logs.LogGroup(this, 'ProviderLogs', { retention: LOG_RETENTION });
    const frameworkRole = new iam.Role(this, 'ProviderRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Custom resource provider of the deploy task ${props.task.id}`,
    });
    frameworkLogs.grantWrite(frameworkRole);
    const provider = new Provider(this, 'Provider', {
      onEventHandler: this.handler.function,
      frameworkOnEventRole: frameworkRole,
      logGroup: frameworkLogs,
    });

    this.resource = new CustomResource(this, 'Run', {
      serviceToken: provider.serviceToken,
      resourceType: `Custom::${props.task.id}`,
      properties: { taskVersion: bundleKey(this.handler.function) },
    });

    Validations.of(frameworkRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${this.handlerLogicalId()}.Arn>:*]`,
      reason:
        'Added by the Provider framework (grantInvoke): lambda:InvokeFunction on the deploy task handler and its ' +
        'versions/aliases (`:*`); the wildcard covers qualifiers of that one function only.',
    });
  }

  /** The handler function's logical id, as cdk-nag names it in an IAM5 finding. */
  private handlerLogicalId(): string {
    const cfn = this.handler.function.node.defaultChild;
    if (!(cfn instanceof lambda.CfnFunction))
      throw new Error('The deploy task handler has no CloudFormation function.');
    return cfn.stack.getLogicalId(cfn);
  }
}
