/**
 * One construct holds every function default (runtime, architecture, bundling, logs, tracing) and turns a route
 * table entry into least-privilege grants: the function may do what its entry says and nothing more.
 */
import * as path from 'node:path';
import { CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { GLOBAL_INDEXES } from '../shared/db/table-definition';
import type { Route } from '../shared/routes';
import type { Worker } from '../shared/workers';
import { bundleRuntimeEnvironment, lambdaBundling } from './bundling';

/** Route entries name their handler files relative to the project root (the folder holding package.json). */
export const PROJECT_ROOT = path.resolve(__dirname, '..');

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Settings every function gets. */
export interface FunctionSettings {
  /** Powertools service name, the `service` field of every log line. */
  readonly serviceName: string;
  readonly logLevel: LogLevel;
}

/**
 * Where Ask AI reaches each AI provider (a proxy, a regional or compatible endpoint). A provider left out keeps its
 * public endpoint (the default in shared/config.ts), and its variable is not set at all.
 */
export interface AiBaseUrls {
  readonly openai?: string;
  readonly anthropic?: string;
  readonly gemini?: string;
}

const AI_BASE_URL_VARIABLES: Record<keyof AiBaseUrls, string> = {
  openai: 'OPENAI_BASE_URL',
  anthropic: 'ANTHROPIC_BASE_URL',
  gemini: 'GEMINI_BASE_URL',
};

/** What routed functions may be granted access to; each function gets only the parts its route asks for. */
export interface RouteResources {
  readonly table: ITable;
  /** The key of the Encryption SDK's KMS keyring. */
  readonly encryptionKey: IKey;
}

/** A function serving one route-table entry. */
export interface RoutedFunctionProps {
  readonly route: Route;
  readonly worker?: never;
  readonly resources: RouteResources;
  readonly settings: FunctionSettings;
  /** Workspace creations allowed per source IP per hour (0 disables the limit); see shared/config.ts. */
  readonly workspaceCreateLimitPerHour: number;
  /** Passed to the functions whose route calls the AI providers, and to no other. */
  readonly aiBaseUrls?: AiBaseUrls;
}

/**
 * A function outside the route table (the `$default` catch-all): same defaults, no table, key or secret. It
 * cannot be handed resources, so it cannot be granted any by mistake.
 */
export interface UnroutedFunctionProps {
  /** Handler file relative to the project root; it exports `handler`. */
  readonly entry: string;
  readonly route?: never;
  readonly worker?: never;
  readonly settings: FunctionSettings;
}

/**
 * A worker of the worker table, woken by the table's stream: read-write data access to the table (no key), a
 * filtered event source that reports failed records one by one, and a dead-letter queue for records it gives
 * up on.
 */
export interface WorkerFunctionProps {
  readonly worker: Worker;
  readonly table: ITable;
  readonly route?: never;
  readonly settings: FunctionSettings;
}

export type RouteFunctionProps = RoutedFunctionProps | UnroutedFunctionProps | WorkerFunctionProps;

/**
 * 1024 MB: Lambda allocates CPU in proportion to memory. Cold starts (loading a bundle that carries the AWS SDK)
 * and the Encryption SDK and token hashing are CPU-bound, so below about 1 GB latency grows faster than the
 * per-millisecond price falls. Revisit with the bench script, not by guess.
 */
const MEMORY_MB = 1024;

/**
 * 29 s: API Gateway ends an HTTP API integration after 29-30 s, so a longer Lambda timeout would only keep
 * running work whose answer nobody receives. The slowest planned operation (ask-ai) needs about 25 s.
 */
const TIMEOUT = Duration.seconds(29);

/**
 * Workers get Lambda's longest run. A run saves its place a minute before the end and wakes a fresh invocation
 * through the stream, so no single invocation has to finish a large migration.
 */
const WORKER_TIMEOUT = Duration.minutes(15);

/**
 * Stream retries of a failing record. Higher than the worker's own give-up count (MAX_FAILED_RUNS in
 * shared/domain/migration.ts), so the worker marks a migration failed, and releases its locks, before the record
 * could land in the dead-letter queue.
 */
const WORKER_RETRY_ATTEMPTS = 10;

/** Kept long enough to investigate an incident reported weeks later, short enough not to pile up cost. */
const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;

/** How cdk-nag writes a CloudFormation `Fn::GetAtt [X, Arn]` in a finding id: `<X.Arn>`. */
function arnReference(resource: IConstruct): string | undefined {
  const cfn = resource.node.defaultChild;
  return cfn instanceof CfnElement ? `<${Stack.of(cfn).getLogicalId(cfn)}.Arn>` : undefined;
}

export class RouteFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RouteFunctionProps) {
    super(scope, id);
    const route = props.route;
    const worker = props.worker;
    const entry = route !== undefined ? route.entry : worker !== undefined ? worker.entry : props.entry;

    // Created explicitly (not Lambda's implicit /aws/lambda/<name>) so that retention is part of the stack and
    // the function needs no logs:CreateLogGroup permission.
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: LOG_RETENTION });

    // An explicit role instead of the default one with the AWSLambdaBasicExecutionRole managed policy, which
    // may write to every log group in the account; this one may write to its own log group only.
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: route !== undefined ? `POST ${route.path}` : worker !== undefined ? worker.summary : `${entry} (no route)`,
    });
    this.logGroup.grantWrite(this.role);

    const environment: Record<string, string> = {
      ...bundleRuntimeEnvironment,
      POWERTOOLS_SERVICE_NAME: props.settings.serviceName,
      LOG_LEVEL: props.settings.logLevel,
    };

    this.function = new NodejsFunction(this, 'Function', {
      entry: path.join(PROJECT_ROOT, entry),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
      description: route !== undefined ? `POST ${route.path}` : worker !== undefined ? worker.summary : `${entry} (requests that match no route)`,
      runtime: lambda.Runtime.NODEJS_22_X,
      // Graviton: about 20% cheaper per GB-second than x86, and the bundle is plain JavaScript.
      architecture: lambda.Architecture.ARM_64,
      memorySize: MEMORY_MB,
      timeout: worker !== undefined ? WORKER_TIMEOUT : TIMEOUT,
      role: this.role,
      logGroup: this.logGroup,
      tracing: lambda.Tracing.ACTIVE,
      environment,
      bundling: lambdaBundling,
    });

    if (route !== undefined) {
      this.grantRouteAccess(route, props.resources, props.workspaceCreateLimitPerHour);
      if (route.calls?.includes('ai-providers')) this.pointAtAiProviders(props.aiBaseUrls ?? {});
    }
    if (props.worker !== undefined) {
      this.subscribeWorker(props.worker, props.table);
    }

    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'nodejs22.x is pinned on purpose: the bundles target node22 and the test suites run on that major version; ' +
        'moving to nodejs24.x is a deliberate upgrade that changes both together.',
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Only the X-Ray statement added by tracing ACTIVE (xray:PutTraceSegments, xray:PutTelemetryRecords): ' +
        'these actions support no resource-level permissions, so "*" is the narrowest resource IAM accepts.',
    });
  }

  private subscribeWorker(worker: Worker, table: ITable): void {
    const fn = this.function;
    fn.addEnvironment('TABLE_NAME', table.tableName);
    table.grantReadWriteData(fn);
    this.acknowledgeIndexWildcard(table);

    const deadLetters = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(deadLetters).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter queue of the stream worker: records the worker gave up on, kept for the operator.',
    });
    fn.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 10,
        retryAttempts: WORKER_RETRY_ATTEMPTS,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(deadLetters),
        filters: [
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.or('INSERT', 'MODIFY'),
            dynamodb: {
              NewImage: {
                recordType: { S: lambda.FilterRule.isEqual(worker.trigger.recordType) },
                status: { S: lambda.FilterRule.or(...worker.trigger.statuses) },
              },
            },
          }),
        ],
      }),
    );
  }

  /** The generic GSIs of the one table: a `/index/*` resource comes with every data grant on it. */
  private acknowledgeIndexWildcard(table: ITable): void {
    const tableArn = arnReference(table);
    if (tableArn === undefined) return;
    Validations.of(this.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${tableArn}/index/*]`,
      reason:
        `Queries through the GSIs (${GLOBAL_INDEXES.map((index) => index.name).join(', ')}) of this one table; the wildcard is limited to that ` +
        "table's indexes, which hold the same tenant-keyed items as the table itself.",
    });
  }

  private pointAtAiProviders(baseUrls: AiBaseUrls): void {
    for (const [provider, variable] of Object.entries(AI_BASE_URL_VARIABLES) as Array<[keyof AiBaseUrls, string]>) {
      const url = baseUrls[provider];
      if (url !== undefined) this.function.addEnvironment(variable, url);
    }
  }

  private grantRouteAccess(route: Route, resources: RouteResources, workspaceCreateLimitPerHour: number): void {
    const fn = this.function;
    fn.addEnvironment('TABLE_NAME', resources.table.tableName);
    fn.addEnvironment('WORKSPACE_CREATE_LIMIT_PER_HOUR', String(workspaceCreateLimitPerHour));

    if (route.table === 'write') {
      resources.table.grantReadWriteData(fn);
    } else {
      resources.table.grantReadData(fn);
    }
    this.acknowledgeIndexWildcard(resources.table);

    // The AWS Encryption SDK with a KMS keyring whose only key is the generator calls GenerateDataKey to encrypt
    // and Decrypt to decrypt; it never calls Encrypt or ReEncrypt, so grantEncrypt() would give more than needed.
    const kmsUse = route.kms ?? [];
    if (kmsUse.length > 0) {
      fn.addEnvironment('KMS_KEY_ARN', resources.encryptionKey.keyArn);
    }
    if (kmsUse.includes('encrypt')) {
      resources.encryptionKey.grant(fn, 'kms:GenerateDataKey');
    }
    if (kmsUse.includes('decrypt')) {
      resources.encryptionKey.grantDecrypt(fn);
    }
  }
}
