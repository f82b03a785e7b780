/**
 * API Gateway's account-level CloudWatch Logs role (`AWS::ApiGateway::Account` `CloudWatchRoleArn`): the role API
 * Gateway assumes to write the logs of REST and WebSocket APIs, access logs included. HTTP APIs log through a
 * service-linked role instead, so the HTTP API's stage needs nothing here; the live WebSocket stage's access logs do,
 * and without the setting its creation fails ("CloudWatch Logs role ARN must be set in account settings to enable
 * logging") and the first deploy in a new account rolls back (issue 30).
 *
 * The setting is one per account and region, shared by every API there, so the role is built for all of them:
 * - its permissions are AWS's own policy for this role (service-role/AmazonAPIGatewayPushToCloudWatchLogs), not a
 *   policy scoped to this stack's log groups: the setting now names this role for every other API of the region, and
 *   a narrower role would silently stop their logs;
 * - the role and the setting are kept when the stack is deleted (RETAIN, as CDK's RestApi `cloudWatchRole` does), so
 *   that deleting one stage never leaves the account's setting naming a deleted role, which would stop the logs of
 *   every API in the region and fail every later stage that turns logging on.
 * Accounts whose platform team manages the setting themselves (a landing zone, a StackSet) deploy with
 * `-c apiGatewayCloudWatchRole=false`: the stack then leaves the setting alone and relies on it (docs/operating.md).
 */
import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/** AWS's managed policy for API Gateway's account-level CloudWatch Logs role. */
export const PUSH_TO_CLOUDWATCH_LOGS_POLICY = 'service-role/AmazonAPIGatewayPushToCloudWatchLogs';

/** Why the role carries an AWS managed policy (cdk-nag IAM4), when every other role of the stack has explicit statements. */
export const ACCOUNT_LOGS_ROLE_REASON =
  'API Gateway assumes this role for the logs of every REST and WebSocket API of the account and region (the ' +
  "AWS::ApiGateway::Account setting is one per region), so it must write to any of their log groups: AWS's own " +
  'AmazonAPIGatewayPushToCloudWatchLogs is the policy AWS documents and maintains for exactly this role.';

/** The role and the account setting that names it; both kept when the stack goes. */
export class ApiGatewayAccountLogsRole extends Construct {
  readonly role: iam.Role;
  /** The `AWS::ApiGateway::Account` resource: a stage that turns logging on must depend on it. */
  readonly account: CfnAccount;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      description:
        'API Gateway account setting (this region): writes the logs of REST and WebSocket APIs to CloudWatch Logs',
      assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName(PUSH_TO_CLOUDWATCH_LOGS_POLICY)],
    });
    this.role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${PUSH_TO_CLOUDWATCH_LOGS_POLICY}]`,
      reason: ACCOUNT_LOGS_ROLE_REASON,
    });
    this.account = new CfnAccount(this, 'Account', { cloudWatchRoleArn: this.role.roleArn });
    // Deleting this resource would not clear the setting anyway; RETAIN says so in the template and keeps
    // CloudFormation from touching the account's setting when the stack goes.
    this.account.applyRemovalPolicy(RemovalPolicy.RETAIN);
  }
}
