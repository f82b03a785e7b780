/**
 * The deployment's CloudWatch alarms, each with the reason for its threshold, and the optional SNS topic they
 * notify. Names are left to CloudFormation (stack name + logical id), so two stages in one account never collide.
 *
 * Function health (Lambda Errors and Throttles) is watched in groups rather than with two alarms per function:
 * - an alarm on a metric-math expression may reference at most 10 metrics (a hard CloudWatch limit), so one alarm
 *   sums the errors and throttles of up to 5 functions of one stack, `SUM(FILL(METRICS(), 0))`, and lives in that
 *   stack (no cross-stack references): a stack of n functions has ceil(n / 5) such alarms (`npm run stack-figures`
 *   counts them);
 * - a Metrics Insights query would cover any number of functions in one alarm, but its WHERE clause has only `=`,
 *   `!=` and AND: it cannot select "this stage's functions" by name (no OR, no prefix match), and selecting them by
 *   resource tag (`tag.stage = ...`) needs the account-level "resource tags on telemetry" setting, without which the
 *   alarm silently matches nothing. Lambda's account-wide metrics would mix in other stages and applications.
 * Grouping cuts the number of alarms (what an operator reads and is notified about), not the bill: CloudWatch bills
 * standard alarms per alarm metric ($0.10 a month, the first 10 free), and a metric-math alarm counts every metric it
 * lists, so two metrics per function cost the same either way (see docs/operating.md, "Stack figures").
 */
import { Aspects, Duration, Stack, type IAspect } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';

/** Five minutes: short enough to page within minutes, long enough that one slow minute is not an incident. */
const PERIOD = Duration.minutes(5);

/** Metrics one metric-math alarm may reference (CloudWatch hard limit). */
const METRICS_PER_ALARM = 10;
/** Each function contributes two metrics: Errors and Throttles. */
export const FUNCTIONS_PER_FAULT_ALARM = METRICS_PER_ALARM / 2;

/**
 * Function faults (Errors + Throttles) per 5 minutes. The handlers turn every expected failure into an error
 * envelope, so a Lambda error is a crash, a timeout or running out of memory; a throttle is a request refused at a
 * concurrency cap. Three in five minutes is a pattern rather than one cold-start hiccup.
 */
export const FUNCTION_FAULT_THRESHOLD = 3;

/**
 * 5xx responses as a percentage of requests, over two consecutive 5-minute periods, and only once the period has
 * at least SERVER_ERROR_MIN_REQUESTS requests: one failure among three night-time requests is not 33 % of anything.
 */
export const SERVER_ERROR_RATE_PERCENT = 5;
export const SERVER_ERROR_MIN_REQUESTS = 20;

/**
 * Oldest unprocessed stream record of a worker. A worker run lasts up to 15 minutes and the next record of the
 * shard waits behind it; twice that means the worker is stuck or failing, with most of the stream's 24-hour
 * retention still left to act.
 */
export const ITERATOR_AGE_THRESHOLD = Duration.minutes(30);

/** A function and what to call it in an alarm description. */
export interface WatchedFunction {
  readonly function: IFunction;
  readonly description: string;
}

/** The share of requests the API answered with a 5xx, as a percentage. */
export function serverErrorRateAlarm(scope: Construct, api: HttpApi): cloudwatch.Alarm {
  const rate = new cloudwatch.MathExpression({
    expression: `IF(requests >= ${SERVER_ERROR_MIN_REQUESTS}, 100 * FILL(errors, 0) / requests, 0)`,
    usingMetrics: {
      errors: api.metricServerError({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
      requests: api.metricCount({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
    },
    period: PERIOD,
    label: '5xx responses, % of requests',
  });
  return rate.createAlarm(scope, 'ApiServerErrorRate', {
    alarmDescription: `More than ${SERVER_ERROR_RATE_PERCENT} % of API requests answered 5xx in two consecutive 5-minute periods (with at least ${SERVER_ERROR_MIN_REQUESTS} requests).`,
    threshold: SERVER_ERROR_RATE_PERCENT,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 2,
    datapointsToAlarm: 2,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}

/** Errors + throttles of the given functions (all in `scope`'s stack), one alarm per FUNCTIONS_PER_FAULT_ALARM. */
export function functionFaultAlarms(scope: Construct, functions: readonly WatchedFunction[]): cloudwatch.Alarm[] {
  const alarms: cloudwatch.Alarm[] = [];
  for (let start = 0; start < functions.length; start += FUNCTIONS_PER_FAULT_ALARM) {
    const group = functions.slice(start, start + FUNCTIONS_PER_FAULT_ALARM);
    const usingMetrics: Record<string, cloudwatch.IMetric> = {};
    group.forEach((watched, i) => {
      usingMetrics[`errors${i}`] = watched.function.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM });
      usingMetrics[`throttles${i}`] = watched.function.metricThrottles({ period: PERIOD, statistic: cloudwatch.Stats.SUM });
    });
    const faults = new cloudwatch.MathExpression({
      // A function that was not invoked reports no data point; FILL counts it as 0 instead of dropping the sum.
      expression: 'SUM(FILL(METRICS(), 0))',
      usingMetrics,
      period: PERIOD,
      label: 'Lambda errors + throttles',
    });
    const index = start / FUNCTIONS_PER_FAULT_ALARM;
    alarms.push(
      faults.createAlarm(scope, index === 0 ? 'FunctionFaults' : `FunctionFaults${index + 1}`, {
        alarmDescription: `${FUNCTION_FAULT_THRESHOLD} or more Lambda errors + throttles in 5 minutes, summed over: ${group.map((watched) => watched.description).join('; ')}`,
        threshold: FUNCTION_FAULT_THRESHOLD,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  return alarms;
}

/** Any record in a worker's dead-letter queue: the worker gave up on it and an operator has to look. */
export function deadLetterAlarm(scope: Construct, id: string, queue: IQueue, worker: string): cloudwatch.Alarm {
  return queue
    .metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM })
    .createAlarm(scope, id, {
      alarmDescription: `Work the worker gave up on (stream records or queued jobs) is waiting in its dead-letter queue: ${worker}`,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
}

/** The namespace of the metrics the service derives from its own log lines. */
export const SERVICE_METRICS_NAMESPACE = 'CollabBackend';

/**
 * Any stream change a reader kept as a dead letter (shared/db/dead-letter.ts): the reader writes each change a
 * consumer gave up on to the table itself, whole, and logs `deadLetters` (how many) on one line; a metric filter on
 * its log group counts them, and one in five minutes is an operator's to look at (`npm run admin --
 * replay-dead-letters --dry-run`). The metric is named after the stack and the reader, so stages never mix.
 */
export function streamDeadLetterAlarm(scope: Construct, id: string, logGroup: logs.ILogGroup, readerId: string, worker: string): cloudwatch.Alarm {
  const metricName = `${Stack.of(scope).stackName}-${readerId}-DeadLetters`;
  new logs.MetricFilter(scope, `${id}Filter`, {
    logGroup,
    filterPattern: logs.FilterPattern.numberValue('$.deadLetters', '>', 0),
    metricNamespace: SERVICE_METRICS_NAMESPACE,
    metricName,
    metricValue: '$.deadLetters',
  });
  return new cloudwatch.Metric({ namespace: SERVICE_METRICS_NAMESPACE, metricName, period: PERIOD, statistic: cloudwatch.Stats.SUM }).createAlarm(scope, id, {
    alarmDescription: `Stream changes a consumer gave up on were kept as dead letters (replay them with npm run admin -- replay-dead-letters): ${worker}`,
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}

/** The age of the oldest stream record a worker has not processed yet. */
export function iteratorAgeAlarm(scope: Construct, id: string, watched: WatchedFunction): cloudwatch.Alarm {
  return watched.function
    .metric('IteratorAge', { period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM })
    .createAlarm(scope, id, {
      alarmDescription: `The worker's oldest unprocessed stream record is older than ${ITERATOR_AGE_THRESHOLD.toMinutes()} minutes: ${watched.description}`,
      threshold: ITERATOR_AGE_THRESHOLD.toMilliseconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
}

/**
 * Deliveries waiting longer than they should: a job is due at most 15 minutes after it was sent (the longest
 * hop), so an older one means the worker is not keeping up or not running.
 */
export const QUEUE_AGE_THRESHOLD = Duration.minutes(20);

export function queueAgeAlarm(scope: Construct, id: string, queue: IQueue): cloudwatch.Alarm {
  return queue
    .metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: cloudwatch.Stats.MAXIMUM })
    .createAlarm(scope, id, {
      alarmDescription: `The oldest job of the delivery queue is older than ${QUEUE_AGE_THRESHOLD.toMinutes()} minutes: webhook deliveries are late.`,
      threshold: QUEUE_AGE_THRESHOLD.toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
}

/** An SNS topic ARN as CloudWatch alarms accept it (standard topics only: alarms cannot publish to FIFO topics). */
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

/**
 * Sends every alarm under `scope`, in the stack and in its nested stacks, to the topic when it fires and when it
 * recovers. An aspect rather than a call per alarm, so an alarm added later cannot be left out.
 */
export function notifyOnEveryAlarm(scope: Construct, topicArn: string): void {
  if (!TOPIC_ARN.test(topicArn)) {
    throw new Error(`The alarm topic must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), got "${topicArn}".`);
  }
  const action = new SnsAction(sns.Topic.fromTopicArn(scope, 'AlarmTopic', topicArn));
  const notify: IAspect = {
    visit(node: IConstruct): void {
      if (node instanceof cloudwatch.Alarm) {
        node.addAlarmAction(action);
        node.addOkAction(action);
      }
    },
  };
  Aspects.of(scope).add(notify);
}
