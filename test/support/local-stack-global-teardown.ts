/**
 * e2e tier: stops the local stack started by the setup and checks that its DynamoDB Local is gone with it; stops
 * the fake AI providers; fails the run when any local stack of it sent a command outside a route's grants.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describeViolation, type Violation } from '../../local/grant-check';
import { takeFakeAiProviders, takeLocalStack } from './local-stack-global-setup';
import { dynamoDbLocalPids, stopLocalStackProcess } from './local-stack-process';

export default async function globalTeardown(): Promise<void> {
  await takeFakeAiProviders()?.stop();
  const stack = takeLocalStack();
  if (stack === undefined) return;
  const violations = grantCheckViolations();
  const status = await stopLocalStackProcess(stack.child);
  const leftover = await pidsAfterExit(stack.dynamodbPort);
  for (const pid of leftover) process.kill(pid, 'SIGKILL');
  if (leftover.length > 0) {
    throw new Error(
      `DynamoDB Local (pid ${leftover.join(', ')}) outlived the local stack; it was killed now.\n${stack.output()}`,
    );
  }
  if (status.code !== 0) {
    throw new Error(`The local stack exited with code ${status.code} (signal ${status.signal}):\n${stack.output()}`);
  }
  if (violations.length > 0) {
    throw new Error(
      `The local stack refused commands outside their route's grants:\n${[...new Set(violations.map(describeViolation))].join('\n')}`,
    );
  }
}

function grantCheckViolations(): Violation[] {
  const file = process.env.GRANT_CHECK_REPORT;
  if (file === undefined || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Violation);
}

/** The stack awaits DynamoDB Local's exit before its own, but give the process table a moment anyway. */
async function pidsAfterExit(port: number): Promise<number[]> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const pids = dynamoDbLocalPids(port);
    if (pids.length === 0) return pids;
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
  return dynamoDbLocalPids(port);
}
