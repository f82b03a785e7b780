/**
 * The dead-letter queues of the stack (the stream workers' and the delivery queue's), built one way: encrypted,
 * TLS only, kept 14 days (SQS's longest) for the operator.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * A dead-letter queue `id` in `scope`. cdk-nag's AwsSolutions-SQS3 (a queue without a dead-letter queue of its own)
 * is acknowledged with `reason`: what the queue keeps.
 */
export function deadLetterQueue(scope: Construct, id: string, reason: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason });
  return queue;
}
