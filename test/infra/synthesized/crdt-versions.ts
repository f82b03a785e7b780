/**
 * Automatic versions' timing (decisions §14) in the CDK stack: `-c crdtVersionQuietSeconds` and
 * `-c crdtVersionMaxSeconds` reach the two functions that use them (the changes reader, which schedules a changed
 * editor's check, and the scheduled worker that keeps the versions) and no other; without them the functions keep
 * the defaults of shared/core/config.ts. The worker runs every minute.
 */
import { buildApp } from '../../../infra/app';
import { crdtAutoVersionsWorker, streamChangesWorker } from '../../../shared/workers';
import { environmentOf, functionWithDescription, resourcesOfType, templatesOf, testApp } from '../templates';

const deploy = (context: Record<string, unknown> = {}) => templatesOf(buildApp(testApp(context)));
const NAMES = ['CRDT_VERSION_QUIET_SECONDS', 'CRDT_VERSION_MAX_SECONDS'];

describe('automatic versions in the stack', () => {
  it('passes -c crdtVersionQuietSeconds and -c crdtVersionMaxSeconds to the changes reader and the versions worker only', () => {
    const deployment = deploy({ crdtVersionQuietSeconds: '120', crdtVersionMaxSeconds: 1800 });
    const users = [crdtAutoVersionsWorker.summary, streamChangesWorker.summary].map((summary) =>
      functionWithDescription(deployment, summary),
    );
    const others = resourcesOfType(deployment, 'AWS::Lambda::Function').filter(
      (fn) => !users.some((user) => user.resource === fn.resource),
    );

    for (const fn of users)
      expect(environmentOf(fn)).toMatchObject({ CRDT_VERSION_QUIET_SECONDS: '120', CRDT_VERSION_MAX_SECONDS: '1800' });
    for (const fn of others) for (const name of NAMES) expect(environmentOf(fn)).not.toHaveProperty(name);
  });

  it('sets neither without the context, and runs the worker every minute', () => {
    const deployment = deploy();
    const worker = functionWithDescription(deployment, crdtAutoVersionsWorker.summary);
    const rules = resourcesOfType(deployment, 'AWS::Events::Rule').map((rule) => rule.resource.Properties);

    for (const name of NAMES) expect(environmentOf(worker)).not.toHaveProperty(name);
    expect(rules).toContainEqual(
      expect.objectContaining({ Description: crdtAutoVersionsWorker.summary, ScheduleExpression: 'rate(1 minute)' }),
    );
  });
});
