/**
 * Live revocation in the deployment (decisions §13 "Nothing lost, nothing stale"): the 60-s backstop is a function
 * run every minute by an EventBridge rule, with only the access it declares; the push path is a consumer of the
 * changes reader, whose role holds what that consumer declares.
 */
import { TABLE_WRITE_ACTIONS } from '../../../shared/grants';
import { liveAccessBackstopWorker, liveRevocationConsumer, streamChangesWorker } from '../../../shared/workers';
import { functionWithDescription, grantsOf, grantsOfServices, resourcesOfType, synthesize } from '../templates';

const deployment = synthesize();

describe('live revocation in the deployment', () => {
  it('runs the access backstop every minute from an EventBridge rule that targets its function', () => {
    const fn = functionWithDescription(deployment, liveAccessBackstopWorker.summary);
    const rules = resourcesOfType(deployment, 'AWS::Events::Rule').filter(
      (rule) => rule.resource.Properties.Description === liveAccessBackstopWorker.summary,
    );

    expect(rules).toHaveLength(1);
    expect(rules[0].resource.Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    const [target] = rules[0].resource.Properties.Targets as Array<{ Arn: unknown; Input: string }>;
    expect(JSON.stringify(target.Arn)).toContain(fn.id);
    // Told its period, from which it takes how old a check may be (every connection, with one run a minute).
    expect(JSON.parse(target.Input)).toEqual({ periodSeconds: 60 });
    const permissions = resourcesOfType(deployment, 'AWS::Lambda::Permission').filter((permission) =>
      JSON.stringify(permission.resource.Properties.FunctionName).includes(fn.id),
    );
    expect(permissions.map((permission) => permission.resource.Properties.Principal)).toEqual(['events.amazonaws.com']);
  });

  it('grants the backstop the table, the check index (gsi2) and the live connections, and nothing else', () => {
    const fn = functionWithDescription(deployment, liveAccessBackstopWorker.summary);

    expect(grantsOfServices(fn, 'dynamodb')).toEqual(
      [...TABLE_WRITE_ACTIONS.map((action) => `${action} on table`), 'dynamodb:Query on table/index/gsi2'].sort(),
    );
    expect(grantsOfServices(fn, 'execute-api').length).toBeGreaterThan(0);
    expect(
      grantsOfServices(fn, 'execute-api').every(
        (grant) => grant.startsWith('execute-api:ManageConnections on ') && grant.includes('@connections/*'),
      ),
    ).toBe(true);
    expect(grantsOfServices(fn, 'kms', 'sqs', 'ses')).toEqual([]);
    // Woken by its schedule only: no stream or queue event source.
    expect(
      resourcesOfType(deployment, 'AWS::Lambda::EventSourceMapping').filter((mapping) =>
        JSON.stringify(mapping.resource.Properties.FunctionName).includes(fn.id),
      ),
    ).toEqual([]);
  });

  it("lets the changes reader find a user's connections (gsi1) and close them, as its revocation consumer declares", () => {
    const reader = grantsOf(functionWithDescription(deployment, streamChangesWorker.summary));

    expect(liveRevocationConsumer).toMatchObject({ table: 'write', indexes: ['gsi1'], connections: 'manage' });
    expect(reader).toContain('dynamodb:Query on table/index/gsi1');
    expect(
      reader.some((grant) => grant.startsWith('execute-api:ManageConnections on ') && grant.includes('@connections/*')),
    ).toBe(true);
  });
});
