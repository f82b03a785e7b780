/**
 * The webhook engine in AWS (docs/design.md "Work after the response"): the delivery queue and its dead-letter
 * queue, the delivery worker on it, the events worker's stream filter, who may send to the queue, and the alarms.
 */
import { routes as routeTable, type Route } from '../../../shared/routes';
import { deliveryQueueWorker, streamChangesWorker } from '../../../shared/workers';
import { buildApp } from '../../../infra/app';
import {
  environmentOf,
  functionOf,
  functionWithDescription,
  grantsOfServices,
  resourcesOfType,
  synthesize,
  templatesOf,
  testApp,
  type Deployment,
  type Located,
} from '../templates';

const routes: readonly Route[] = routeTable;
const deployment = synthesize();

const queues = (d: Deployment) => resourcesOfType(d, 'AWS::SQS::Queue');
const deliveryQueue = (d: Deployment) => queues(d).find((queue) => queue.id.startsWith('DeliveryQueue')) as Located;
const mappingsOf = (d: Deployment, fn: Located) =>
  resourcesOfType(d, 'AWS::Lambda::EventSourceMapping').filter(
    (mapping) => JSON.stringify(mapping.resource.Properties.FunctionName) === JSON.stringify({ Ref: fn.id }),
  );

describe('the webhook engine', () => {
  it('has an encrypted delivery queue whose jobs go to a dead-letter queue after five failed receives', () => {
    const queue = deliveryQueue(deployment);

    expect(queue.resource.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 360,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [expect.stringMatching(/^DeliveryDeadLetters/), 'Arn'] },
        maxReceiveCount: 5,
      },
    });
  });

  it('feeds the delivery worker from the queue, reporting failed jobs one by one, with only the private-URL setting of its own', () => {
    const fn = functionWithDescription(deployment, deliveryQueueWorker.summary);
    const [mapping] = mappingsOf(deployment, fn);

    expect(mapping.resource.Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [deliveryQueue(deployment).id, 'Arn'] },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(fn.resource.Properties).toMatchObject({ Timeout: 60 });
    expect(environmentOf(fn)).toMatchObject({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    expect(grantsOfServices(fn, 'kms')).toEqual([expect.stringMatching(/^kms:Decrypt on /)]);
  });

  it('allows private webhook destinations only when the context says so', () => {
    const app = testApp({ webhookAllowPrivateUrls: 'true' });
    const allowing = templatesOf(buildApp(app));

    expect(environmentOf(functionWithDescription(allowing, deliveryQueueWorker.summary))).toMatchObject({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    });
  });

  it('wakes the changes reader for exactly the kinds of change that can be events or emails, profiles and memberships, and changes that may take access away', () => {
    const fn = functionWithDescription(deployment, streamChangesWorker.summary);
    const [mapping] = mappingsOf(deployment, fn);
    const filters = (mapping.resource.Properties.FilterCriteria as { Filters: Array<{ Pattern: string }> }).Filters.map(
      (filter) => JSON.parse(filter.Pattern),
    );

    expect(mapping.resource.Properties).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
    });
    // The events consumer's five interests, the profile-copies consumer's two and the live-revocation consumer's
    // (grants and documents written, memberships written, removals by sort key), merged where only the sort key
    // differs, and a pattern another covers dropped: five patterns.
    expect(filters).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: {
          Keys: {
            sk: {
              S: [
                'ACTIVITY',
                { prefix: 'NOTIF#' },
                { prefix: 'REC#' },
                'PROFILE',
                { prefix: 'O#' },
                { prefix: 'DOC#' },
              ],
            },
          },
        },
      },
      {
        eventName: ['INSERT', 'MODIFY'],
        // CRDT heads and deltas, and versions' summaries (decisions §14), written with their editor's last update.
        dynamodb: {
          Keys: { sk: { S: [{ prefix: 'E#' }, { prefix: 'V#' }] } },
          NewImage: { lastUpdate: { S: [{ exists: true }] } },
        },
      },
      {
        eventName: ['MODIFY'],
        dynamodb: { NewImage: { recordType: { S: ['documentMigration'] }, status: { S: ['completed', 'failed'] } } },
      },
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { Keys: { sk: { S: [{ prefix: 'U#' }] } }, NewImage: { levelType: { S: [{ exists: true }] } } },
      },
      { eventName: ['REMOVE'], dynamodb: { Keys: { sk: { S: [{ prefix: 'U#' }, { prefix: 'O#' }] } } } },
    ]);
  });

  it('lets only the functions that queue jobs send to the delivery queue, and nothing else of SQS', () => {
    const senders = [
      ...routes.filter((route) => route.queue === 'send').map((route) => functionOf(deployment, route.path)),
      functionWithDescription(deployment, streamChangesWorker.summary),
      functionWithDescription(deployment, deliveryQueueWorker.summary),
    ];
    const others = routes.filter((route) => route.queue !== 'send').map((route) => functionOf(deployment, route.path));

    expect(
      routes
        .filter((route) => route.queue === 'send')
        .map((route) => route.path)
        .sort(),
    ).toEqual(['/v2/workspace/advancedwebhook/endpoints/recover', '/v2/workspace/advancedwebhook/messages/resend']);
    for (const fn of senders) {
      // The grants name a queue by its kind; the stack grants the delivery queue's ARN (infra/service-function.ts). The
      // events worker also sends to its own dead-letter queue (the stream event source's on-failure destination).
      expect(grantsOfServices(fn, 'sqs').filter((grant) => grant.startsWith('sqs:SendMessage'))).toContain(
        'sqs:SendMessage on queue',
      );
      expect(environmentOf(fn)).toHaveProperty('DELIVERY_QUEUE_URL');
    }
    for (const path of [
      '/v2/workspace/advancedwebhook/endpoints/recover',
      '/v2/workspace/advancedwebhook/messages/resend',
    ]) {
      expect(grantsOfServices(functionOf(deployment, path), 'sqs')).toEqual(['sqs:SendMessage on queue']);
    }
    for (const fn of others) {
      expect(grantsOfServices(fn, 'sqs')).toEqual([]);
      expect(environmentOf(fn)).not.toHaveProperty('DELIVERY_QUEUE_URL');
    }
  });

  it('alarms when the oldest delivery job is older than 20 minutes and on any job in the dead-letter queue', () => {
    const alarms = resourcesOfType(deployment, 'AWS::CloudWatch::Alarm').map((alarm) => alarm.resource.Properties);

    expect(alarms).toContainEqual(
      expect.objectContaining({
        MetricName: 'ApproximateAgeOfOldestMessage',
        Namespace: 'AWS/SQS',
        Threshold: 1200,
        ComparisonOperator: 'GreaterThanThreshold',
      }),
    );
    expect(alarms).toContainEqual(
      expect.objectContaining({
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [
          { Name: 'QueueName', Value: { 'Fn::GetAtt': [expect.stringMatching(/^DeliveryDeadLetters/), 'QueueName'] } },
        ],
        Threshold: 1,
      }),
    );
  });
});
