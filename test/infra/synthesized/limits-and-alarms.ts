/**
 * The limits of infra/limits.ts as deployed (reserved concurrency, per-route throttles), the alarms (what each
 * watches, its threshold, and where it sends notifications), and the docs' figures about the stacks, regenerated
 * from the same two syntheses (infra/stack-figures.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIGURES_FILE, REFRESH_COMMAND, renderFigures, stackFigures } from '../../../infra/stack-figures';
import { GLOBAL_INDEXES } from '../../../shared/db/table-definition';
import { socketRoutes } from '../../../shared/routes';
import { workers } from '../../../shared/workers';
import {
  type Located,
  describeReference,
  environmentOf,
  functionWithDescription,
  resourcesOfType,
  synthesize,
} from '../templates';

interface MetricQuery {
  readonly Id: string;
  readonly Expression?: string;
  readonly ReturnData?: boolean;
  readonly MetricStat?: {
    readonly Metric: {
      readonly MetricName: string;
      readonly Namespace: string;
      readonly Dimensions: Array<{ Name: string; Value: unknown }>;
    };
    readonly Stat: string;
    readonly Period: number;
  };
}

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:collab-alarms';

/** The default context, as a first `cdk deploy` into a new account has it. */
const deployment = synthesize();
/** The opt-ins: reserved concurrency and an alarm topic. */
const configured = synthesize({ reserveConcurrency: true, alarmTopicArn: TOPIC });

const alarmsOf = (target: typeof deployment) => resourcesOfType(target, 'AWS::CloudWatch::Alarm');
/** The metric-math queries of an alarm; none for an alarm on a single metric. */
const queriesOf = (alarm: Located) => (alarm.resource.Properties.Metrics as MetricQuery[] | undefined) ?? [];
const isProviderFramework = (fn: Located) =>
  String(fn.resource.Properties.Description).startsWith('AWS CDK resource provider framework');

function reservations(target: typeof deployment): Record<string, unknown> {
  return Object.fromEntries(
    resourcesOfType(target, 'AWS::Lambda::Function')
      .filter((fn) => fn.resource.Properties.ReservedConcurrentExecutions !== undefined)
      .map((fn) => [fn.resource.Properties.Description, fn.resource.Properties.ReservedConcurrentExecutions]),
  );
}

/** The HTTP API's stage. */
function stageOf(target: typeof deployment): Located {
  const [stage] = resourcesOfType(target, 'AWS::ApiGatewayV2::Stage').filter(
    (candidate) => describeReference(candidate.resource.Properties.ApiId, candidate.stack) === 'api Ref',
  );
  return stage;
}

describe('limits', () => {
  it("reserves no concurrency by default, in any template (a new account's quota of 10 cannot spare any)", () => {
    const reservingResources = deployment.all.flatMap((stack) =>
      Object.entries(stack.resources)
        .filter(([, resource]) => JSON.stringify(resource).includes('ReservedConcurrentExecutions'))
        .map(([id]) => `${stack.name}/${id}`),
    );

    expect(reservingResources).toEqual([]);
  });

  it('reserves concurrency for Ask AI and for each stream worker, and for no other function, with reserveConcurrency=true', () => {
    // Written out, not read from infra/limits.ts: the numbers are what this test holds the deployment to.
    expect(reservations(configured)).toEqual({
      'POST /v2/rewriter/ask-ai': 20,
      ...Object.fromEntries(workers.map((worker) => [worker.summary, 5])),
    });
  });

  it('throttles Ask AI and Create Workspace per route key on top of the stage default, with or without reservations', () => {
    const expected = {
      'POST /v2/rewriter/ask-ai': { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 20 },
      'POST /v2/workspace/create': { ThrottlingRateLimit: 1, ThrottlingBurstLimit: 5 },
    };

    expect(stageOf(deployment).resource.Properties.RouteSettings).toEqual(expected);
    expect(stageOf(configured).resource.Properties.RouteSettings).toEqual(expected);
    expect(stageOf(deployment).resource.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 100,
      ThrottlingBurstLimit: 200,
    });
  });

  it('updates the stage only after every nested stack of routes (route settings need their routes) and the deploy tasks', () => {
    const stage = stageOf(deployment);
    // The nested stacks holding the HTTP API's routes (the WebSocket API's stage waits for its own, test/infra/live.test.ts).
    const httpRouteStacks = deployment.nested.filter((nested) =>
      Object.values(nested.resources).some((resource) => String(resource.Properties?.RouteKey).startsWith('POST ')),
    );
    const nestedStacks = resourcesOfType(deployment, 'AWS::CloudFormation::Stack')
      .filter((nested) => httpRouteStacks.some((routeStack) => nested.id.startsWith(`${routeStack.name}NestedStack`)))
      .map((nested) => nested.id);
    const taskRuns = resourcesOfType(deployment, 'Custom::ServerSecrets').map((run) => run.id);

    expect(nestedStacks.length).toBe(httpRouteStacks.length);
    expect(nestedStacks.length).toBeGreaterThan(1);
    expect(stage.resource.DependsOn).toEqual(expect.arrayContaining([...nestedStacks, ...taskRuns]));
  });
});

describe('alarms', () => {
  it("alarms on the API's 5xx rate (not count): above 5 % of at least 20 requests, two 5-minute periods running", () => {
    const found = alarmsOf(deployment).filter((alarm) =>
      queriesOf(alarm).some((query) => query.MetricStat?.Metric.MetricName === '5xx'),
    );
    expect(found).toHaveLength(1);
    const [alarm] = found;
    const queries = queriesOf(alarm);
    const metric = (name: string) => queries.find((query) => query.MetricStat?.Metric.MetricName === name);

    expect(alarm.resource.Properties).toMatchObject({
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
    });
    expect(queries.find((query) => query.ReturnData !== false)?.Expression).toBe(
      'IF(requests >= 20, 100 * FILL(errors, 0) / requests, 0)',
    );
    expect(metric('5xx')).toMatchObject({
      Id: 'errors',
      MetricStat: { Stat: 'Sum', Period: 300, Metric: { Namespace: 'AWS/ApiGateway' } },
    });
    expect(metric('Count')).toMatchObject({
      Id: 'requests',
      MetricStat: { Stat: 'Sum', Period: 300, Metric: { Namespace: 'AWS/ApiGateway' } },
    });
    expect(describeReference(metric('5xx')?.MetricStat?.Metric.Dimensions[0].Value, alarm.stack)).toBe('api Ref');
  });

  it("watches every function's errors and throttles in exactly one alarm of its own stack, at most 5 functions (10 metrics) per alarm", () => {
    const functions = resourcesOfType(deployment, 'AWS::Lambda::Function').filter((fn) => !isProviderFramework(fn));
    const faultAlarms = alarmsOf(deployment).filter((alarm) =>
      queriesOf(alarm).some((query) => query.Expression === 'SUM(FILL(METRICS(), 0))'),
    );
    const watched = faultAlarms.flatMap((alarm) =>
      queriesOf(alarm)
        .filter((query) => query.MetricStat !== undefined)
        .map(
          (query) =>
            `${alarm.stack.name} ${JSON.stringify(query.MetricStat?.Metric.Dimensions)} ${query.MetricStat?.Metric.MetricName}`,
        ),
    );

    for (const alarm of faultAlarms) {
      expect(queriesOf(alarm).filter((query) => query.MetricStat !== undefined).length).toBeLessThanOrEqual(10);
      expect(alarm.resource.Properties).toMatchObject({
        Threshold: 3,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    }
    expect(watched.sort()).toEqual(
      functions
        .flatMap((fn) =>
          ['Errors', 'Throttles'].map(
            (metric) =>
              `${fn.stack.name} ${JSON.stringify([{ Name: 'FunctionName', Value: { Ref: fn.id } }])} ${metric}`,
          ),
        )
        .sort(),
    );
  });

  it.each(workers.map((worker) => [worker.id, worker] as const))(
    '%s: alarms on any record in its dead-letter queue and on a stream iterator older than 30 minutes',
    (_, worker) => {
      const fn = functionWithDescription(deployment, worker.summary);
      const [mapping] = resourcesOfType(deployment, 'AWS::Lambda::EventSourceMapping').filter(
        (candidate) => JSON.stringify(candidate.resource.Properties.FunctionName) === JSON.stringify({ Ref: fn.id }),
      );
      const deadLetters = (
        mapping.resource.Properties.DestinationConfig as {
          OnFailure: { Destination: { 'Fn::GetAtt': [string, string] } };
        }
      ).OnFailure.Destination['Fn::GetAtt'][0];
      const alarmsOn = (metricName: string, dimension: { Name: string; Value: unknown }) =>
        alarmsOf(deployment)
          .filter(
            (alarm) =>
              alarm.resource.Properties.MetricName === metricName &&
              JSON.stringify(alarm.resource.Properties.Dimensions) === JSON.stringify([dimension]),
          )
          .map((alarm) => alarm.resource.Properties);

      expect(
        alarmsOn('ApproximateNumberOfMessagesVisible', {
          Name: 'QueueName',
          Value: { 'Fn::GetAtt': [deadLetters, 'QueueName'] },
        }),
      ).toEqual([
        expect.objectContaining({
          Namespace: 'AWS/SQS',
          Statistic: 'Maximum',
          Period: 300,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        }),
      ]);
      expect(alarmsOn('IteratorAge', { Name: 'FunctionName', Value: { Ref: fn.id } })).toEqual([
        expect.objectContaining({
          Namespace: 'AWS/Lambda',
          Statistic: 'Maximum',
          Period: 300,
          Threshold: 30 * 60 * 1000,
          ComparisonOperator: 'GreaterThanThreshold',
        }),
      ]);
    },
  );

  it.each(workers.map((worker) => [worker.id, worker] as const))(
    '%s: counts the dead letters it keeps from its log lines and alarms on any',
    (_, worker) => {
      const fn = functionWithDescription(deployment, worker.summary);
      const logGroup = (fn.resource.Properties.LoggingConfig as { LogGroup: unknown }).LogGroup;
      const filters = resourcesOfType(deployment, 'AWS::Logs::MetricFilter').filter(
        (filter) => JSON.stringify(filter.resource.Properties.LogGroupName) === JSON.stringify(logGroup),
      );
      const transformation = (
        filters[0]?.resource.Properties.MetricTransformations as
          Array<{ MetricName: unknown; MetricNamespace: string; MetricValue: string }> | undefined
      )?.[0];
      const alarms = alarmsOf(deployment).filter(
        (alarm) =>
          JSON.stringify(alarm.resource.Properties.MetricName) === JSON.stringify(transformation?.MetricName) &&
          alarm.resource.Properties.Namespace === transformation?.MetricNamespace,
      );

      expect(filters.map((filter) => filter.resource.Properties.FilterPattern)).toEqual(['{ $.deadLetters > 0 }']);
      expect(transformation).toMatchObject({ MetricNamespace: 'CollabBackend', MetricValue: '$.deadLetters' });
      expect(alarms.map((alarm) => alarm.resource.Properties)).toEqual([
        expect.objectContaining({
          Statistic: 'Sum',
          Period: 300,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        }),
      ]);
    },
  );

  it('has no alarm actions when no topic is given', () => {
    for (const alarm of alarmsOf(deployment)) {
      expect([alarm.resource.Properties.AlarmActions, alarm.resource.Properties.OKActions]).toEqual([
        undefined,
        undefined,
      ]);
    }
  });

  it('notifies the alarmTopicArn topic from every alarm in every stack, when it fires and when it recovers', () => {
    const alarms = alarmsOf(configured);

    expect(new Set(alarms.map((alarm) => alarm.stack.name)).size).toBe(configured.all.length);
    for (const alarm of alarms) {
      expect(alarm.resource.Properties).toMatchObject({ AlarmActions: [TOPIC], OKActions: [TOPIC] });
    }
  });

  it('refuses an alarm topic that is not an SNS topic ARN', () => {
    expect(() => synthesize({ alarmTopicArn: 'arn:aws:sqs:eu-west-1:123456789012:queue' })).toThrow(
      /alarm topic must be an SNS topic ARN/,
    );
  });
});

describe('the live path and the table in the alarms (issue 30 item 6)', () => {
  /** A metric-math alarm's metrics as `<namespace> <metric> <dimension=value,...>` (dimensions by name), references described. */
  const metricsOf = (alarm: Located) =>
    queriesOf(alarm)
      .filter((query) => query.MetricStat !== undefined)
      .map((query) => {
        const metric = query.MetricStat!.Metric;
        const dimensions = metric.Dimensions.map(
          (dimension) => `${dimension.Name}=${describeReference(dimension.Value, alarm.stack)}`,
        )
          .sort()
          .join(',');
        return `${metric.Namespace} ${metric.MetricName} ${dimensions}`;
      });
  const alarmsListing = (target: typeof deployment, metricName: string) =>
    alarmsOf(target).filter((alarm) => metricsOf(alarm).some((metric) => metric.split(' ')[1] === metricName));

  it('turns the live metrics on in every live function, in the namespace of its stage, and in no other function', () => {
    const functions = resourcesOfType(deployment, 'AWS::Lambda::Function');
    const withNamespace = functions
      .filter((fn) => 'POWERTOOLS_METRICS_NAMESPACE' in (environmentOf(fn) ?? {}))
      .map((fn) => String(fn.resource.Properties.Description));

    expect(withNamespace.sort()).toEqual(socketRoutes.map((route) => `WebSocket ${route.routeKey}`).sort());
    for (const route of socketRoutes) {
      expect(environmentOf(functionWithDescription(deployment, `WebSocket ${route.routeKey}`))).toMatchObject({
        POWERTOOLS_METRICS_NAMESPACE: 'collab-backend/dev',
        POWERTOOLS_METRICS_DISABLED: 'false',
        POWERTOOLS_SERVICE_NAME: 'collab-backend',
      });
    }
  });

  it("alarms on 10 or more live failures + relay failures in 5 minutes, over every route key, in the live stack, in the functions' namespace", () => {
    const found = alarmsListing(deployment, 'LiveFailures');
    expect(found).toHaveLength(1);
    const [alarm] = found;

    expect(alarm.stack.name).toBe('LiveSocketRoutes');
    expect(alarm.resource.Properties).toMatchObject({
      Threshold: 10,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
    expect(metricsOf(alarm).sort()).toEqual(
      socketRoutes
        .flatMap((route) =>
          ['LiveFailures', 'LiveRelayFailures'].map(
            (metric) => `collab-backend/dev ${metric} route=${route.routeKey},service=collab-backend`,
          ),
        )
        .sort(),
    );
    expect(metricsOf(alarm).length).toBeLessThanOrEqual(10);
    expect(queriesOf(alarm).find((query) => query.ReturnData !== false)?.Expression).toBe(
      'SUM(FILL(METRICS("fail"), 0)) + SUM(FILL(METRICS("relay"), 0))',
    );
    expect(String(alarm.resource.Properties.AlarmDescription)).toMatch(/resync/);
  });

  it("alarms on 3 or more of the WebSocket stage's execution errors in 5 minutes", () => {
    const found = alarmsOf(deployment).filter((alarm) => alarm.resource.Properties.MetricName === 'ExecutionError');
    expect(found).toHaveLength(1);
    const { resource, stack } = found[0];
    const dimensions = (resource.Properties.Dimensions as Array<{ Name: string; Value: unknown }>).map(
      (dimension) => `${dimension.Name}=${describeReference(dimension.Value, stack)}`,
    );

    expect(resource.Properties).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
    expect(dimensions).toEqual(['ApiId=websocket api Ref', 'Stage=dev']);
  });

  it("alarms on the WebSocket stage's 4xx refusals (its throttle) above 5 % of at least 100 messages, two 5-minute periods running", () => {
    const found = alarmsListing(deployment, 'ClientError');
    expect(found).toHaveLength(1);
    const [alarm] = found;

    expect(alarm.resource.Properties).toMatchObject({
      Threshold: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
    });
    expect(queriesOf(alarm).find((query) => query.ReturnData !== false)?.Expression).toBe(
      'IF(messages >= 100, 100 * FILL(errors, 0) / messages, 0)',
    );
    expect(metricsOf(alarm).sort()).toEqual([
      'AWS/ApiGateway ClientError ApiId=websocket api Ref,Stage=dev',
      'AWS/ApiGateway MessageCount ApiId=websocket api Ref,Stage=dev',
    ]);
  });

  it('watches the read and write throttle events of the table and of every index exactly once, at most 10 metrics per alarm, 10 or more in 5 minutes', () => {
    const found = alarmsListing(deployment, 'ReadThrottleEvents');
    const watched = found.flatMap(metricsOf);

    for (const alarm of found) {
      expect(alarm.stack).toBe(deployment.parent);
      expect(metricsOf(alarm).length).toBeLessThanOrEqual(10);
      expect(alarm.resource.Properties).toMatchObject({
        Threshold: 10,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    }
    expect(watched.sort()).toEqual(
      [
        'TableName=table Ref',
        ...GLOBAL_INDEXES.map((index) => `GlobalSecondaryIndexName=${index.name},TableName=table Ref`),
      ]
        .flatMap((dimensions) =>
          ['ReadThrottleEvents', 'WriteThrottleEvents'].map((metric) => `AWS/DynamoDB ${metric} ${dimensions}`),
        )
        .sort(),
    );
  });
});

describe('the figures in the docs', () => {
  it('are the ones the synthesized templates give (resources per stack, functions, alarms, reservations, fixed cost)', () => {
    // The alarm topic of `configured` adds alarm actions, not resources; it is only read for its reservations.
    const generated = renderFigures(stackFigures(deployment.all, configured.all));
    const documentedLines = readFileSync(join(__dirname, '..', '..', '..', FIGURES_FILE), 'utf8').split('\n');
    const generatedLines = generated.split('\n');
    const lineCount = Math.max(documentedLines.length, generatedLines.length);
    const line = Array.from({ length: lineCount }, (_, i) => i).findIndex(
      (i) => documentedLines[i] !== generatedLines[i],
    );

    // A plain toBe would show the difference but not the remedy; the message names the command.
    const difference =
      line < 0
        ? 'none'
        : `${FIGURES_FILE} is out of date (run \`${REFRESH_COMMAND}\`); line ${line + 1}:\n  documented: ${documentedLines[line] ?? '(none)'}\n  generated:  ${generatedLines[line] ?? '(none)'}`;
    expect(difference).toBe('none');
  });

  it('refuses a resource type with no price class, so a new charge at rest cannot be left out of the cost', () => {
    const parent = { name: 'Parent', resources: { Gateway: { Type: 'AWS::EC2::NatGateway' } } };
    const nested = {
      name: 'SomeRoutes',
      resources: { Fn: { Type: 'AWS::Lambda::Function', Properties: { Description: 'POST /v2/some/get' } } },
    };

    expect(() => stackFigures([parent, nested], [parent, nested])).toThrow(/no price class for AWS::EC2::NatGateway/);
  });
});
