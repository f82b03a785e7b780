/**
 * Runs the deploy tasks (shared/deploy-tasks.ts) the way CloudFormation runs their custom resources on a stack's
 * creation: the local stack before it serves, the connected tests on each test file's table. Each runs under its
 * grants (local/grant-check.ts) and loads its handler only when called, after the environment is set.
 */
import { join, resolve } from 'node:path';
import type { CloudFormationCustomResourceCreateEvent } from 'aws-lambda';
import { deployTasks } from '../shared/deploy-tasks';
import { runAsDeployTask } from './grant-check';

const PROJECT_ROOT = resolve(__dirname, '..');

type DeployTaskHandler = (event: CloudFormationCustomResourceCreateEvent) => Promise<unknown>;

export async function runDeployTasks(): Promise<void> {
  for (const task of deployTasks) {
    const { handler } = require(join(PROJECT_ROOT, task.entry)) as { handler: DeployTaskHandler };
    const event: CloudFormationCustomResourceCreateEvent = {
      RequestType: 'Create',
      ServiceToken: 'local',
      ResponseURL: 'http://127.0.0.1/unused',
      StackId: 'local',
      RequestId: 'local',
      LogicalResourceId: task.id,
      ResourceType: 'Custom::DeployTask',
      ResourceProperties: { ServiceToken: 'local' },
    };
    await runAsDeployTask(task, () => handler(event));
  }
}
