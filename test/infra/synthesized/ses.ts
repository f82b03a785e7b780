/**
 * SES in AWS (docs/decisions.md §12, infra/ses.ts): the identity, configuration set and sending-authorization ARN the
 * operator names in the context become the delivery worker's grant, on exactly those ARNs, and its environment; with
 * no identity no function may send through SES; a value SES would not take fails the synthesis.
 */
import { addNagChecks, buildApp } from '../../../infra/app';
import { assertValidSesIdentity } from '../../../infra/ses';
import { CollabStack } from '../../../infra/stack';
import { deliveryQueueWorker } from '../../../shared/workers';
import {
  environmentOf,
  functionWithDescription,
  resourcesOfType,
  statementsOf,
  templatesOf,
  testApp,
  type Deployment,
  type Statement,
} from '../templates';

const ACCOUNT = '123456789012';
const AUTHORIZING_ARN = 'arn:aws:ses:eu-west-1:210987654321:identity/example.org';

/** `arn:<partition>:ses:<region>:<account>:<resource>` as the stack writes it for its own account and region. */
function ownArn(resource: string): unknown {
  return {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':ses:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        `:${resource}`,
      ],
    ],
  };
}

function deploymentWith(context: Record<string, unknown>): Deployment {
  return templatesOf(buildApp(testApp(context)));
}

const deliveryWorker = (deployment: Deployment) => functionWithDescription(deployment, deliveryQueueWorker.summary);

const actionsOf = (statement: Statement): string[] =>
  typeof statement.Action === 'string' ? [statement.Action] : [...statement.Action];
const isSes = (statement: Statement): boolean => actionsOf(statement).some((action) => action.startsWith('ses:'));

/** Every statement of every IAM policy in the parent and nested stacks. */
function allStatements(deployment: Deployment): Statement[] {
  return resourcesOfType(deployment, 'AWS::IAM::Policy').flatMap(
    (policy) => (policy.resource.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
  );
}

const SES_VARIABLES = ['SES_IDENTITY', 'SES_CONFIGURATION_SET', 'SES_IDENTITY_ARN'];

/** The SES_* variables of every function other than the delivery worker. */
function sesVariablesElsewhere(deployment: Deployment): string[] {
  return resourcesOfType(deployment, 'AWS::Lambda::Function')
    .filter((fn) => fn.resource.Properties.Description !== deliveryQueueWorker.summary)
    .flatMap((fn) => {
      const variables =
        (fn.resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      return SES_VARIABLES.filter((name) => name in variables).map(
        (name) => `${String(fn.resource.Properties.Description)}: ${name}`,
      );
    });
}

const withConfigurationSet = deploymentWith({ sesIdentity: 'example.com', sesConfigurationSet: 'collab-events' });

describe('SES in AWS', () => {
  it('lets the delivery worker send (SendEmail and SendRawEmail) from exactly the identity and configuration set named in the context', () => {
    const fn = deliveryWorker(withConfigurationSet);

    expect(statementsOf(fn).filter(isSes)).toEqual([
      {
        Effect: 'Allow',
        Action: ['ses:SendEmail', 'ses:SendRawEmail'],
        Resource: [ownArn('identity/example.com'), ownArn('configuration-set/collab-events')],
      },
    ]);
    expect(environmentOf(fn)).toMatchObject({ SES_IDENTITY: 'example.com', SES_CONFIGURATION_SET: 'collab-events' });
    // The account's own identity needs no sending authorization: SES finds it from the From address.
    expect(environmentOf(fn)).not.toHaveProperty('SES_IDENTITY_ARN');
  });

  it('names only the identity when no configuration set is given, an address identity as it is', () => {
    const fn = deliveryWorker(deploymentWith({ sesIdentity: 'notifications@example.com' }));

    expect(statementsOf(fn).filter(isSes)).toEqual([
      {
        Effect: 'Allow',
        Action: ['ses:SendEmail', 'ses:SendRawEmail'],
        Resource: ownArn('identity/notifications@example.com'),
      },
    ]);
    expect(environmentOf(fn)).toMatchObject({ SES_IDENTITY: 'notifications@example.com' });
    expect(environmentOf(fn)).not.toHaveProperty('SES_CONFIGURATION_SET');
  });

  it("sends from another account's identity under its sending authorization: the grant names that ARN, and the worker passes it", () => {
    const fn = deliveryWorker(
      deploymentWith({ sesIdentityArn: AUTHORIZING_ARN, sesConfigurationSet: 'collab-events' }),
    );

    expect(statementsOf(fn).filter(isSes)).toEqual([
      {
        Effect: 'Allow',
        Action: ['ses:SendEmail', 'ses:SendRawEmail'],
        Resource: [AUTHORIZING_ARN, ownArn('configuration-set/collab-events')],
      },
    ]);
    expect(environmentOf(fn)).toMatchObject({
      SES_IDENTITY: 'example.org',
      SES_IDENTITY_ARN: AUTHORIZING_ARN,
      SES_CONFIGURATION_SET: 'collab-events',
    });
  });

  it('grants no SES action to a role of the parent or a nested stack, and sets no SES variable, when the context names no identity', () => {
    const deployment = deploymentWith({});

    expect(allStatements(deployment).filter(isSes)).toEqual([]);
    expect(environmentOf(deliveryWorker(deployment))).not.toHaveProperty('SES_IDENTITY');
    expect(sesVariablesElsewhere(deployment)).toEqual([]);
  });

  it('grants SES to the delivery worker only, never on a wildcard', () => {
    const sesStatements = allStatements(withConfigurationSet).filter(isSes);

    expect(sesStatements).toEqual(statementsOf(deliveryWorker(withConfigurationSet)).filter(isSes));
    expect(JSON.stringify(sesStatements)).not.toContain('*');
    expect(sesVariablesElsewhere(withConfigurationSet)).toEqual([]);
  });

  it('passes cdk-nag with SES configured', () => {
    const app = testApp({ sesIdentity: 'example.com', sesConfigurationSet: 'collab-events' });
    buildApp(app);

    expect(addNagChecks(app).validateScope(app).violations).toEqual([]);
  });

  it.each([
    ['example.com'],
    ['mail.example.co.uk'],
    ['xn--bcher-kva.example'],
    ['notifications@example.com'],
    ['first.last+alerts@mail.example.com'],
  ])('accepts the identity %s', (identity) => {
    expect(() => assertValidSesIdentity(identity)).not.toThrow();
  });

  it.each([
    [{ sesIdentity: '*.example.com' }, /must name one identity: no wildcard/],
    [{ sesIdentity: 'notifications?@example.com' }, /must name one identity: no wildcard/],
    [{ sesIdentity: '${aws:username}@example.com' }, /policy variable/],
    [{ sesIdentity: 'bücher.example' }, /punycode/],
    [{ sesIdentity: 'mail @example.com' }, /ASCII without spaces/],
    [{ sesIdentity: 'example' }, /must be a verified domain \(example.com\) or email address/],
    [{ sesIdentity: '-example.com' }, /must be a verified domain/],
    [{ sesIdentity: '192.0.2.1' }, /must be a verified domain/],
    [{ sesIdentity: 'a..b@example.com' }, /must be a verified domain/],
    [{ sesIdentity: '@example.com' }, /must be a verified domain/],
    [{ sesIdentity: 'arn:aws:ses:eu-west-1:123456789012:identity/example.com' }, /must be a verified domain/],
    [{ sesIdentity: '' }, /sesIdentity must be a non-empty string/],
    [
      { sesIdentity: 'example.com', sesConfigurationSet: 'collab events' },
      /1-64 letters, digits, underscores or hyphens/,
    ],
    [
      { sesIdentity: 'example.com', sesConfigurationSet: 'c'.repeat(65) },
      /1-64 letters, digits, underscores or hyphens/,
    ],
    [{ sesConfigurationSet: 'collab-events' }, /sesConfigurationSet needs sesIdentity/],
    [
      { sesIdentityArn: 'arn:aws:ses:eu-west-1:1234:identity/example.org' },
      /must be arn:aws:ses:<region>:<account>:identity/,
    ],
    [{ sesIdentityArn: 'arn:aws:ses:eu-west-1:210987654321:identity/*' }, /no wildcard/],
    [{ sesIdentityArn: AUTHORIZING_ARN, sesIdentity: 'example.com' }, /must name the same identity/],
  ])('refuses the context %j at synthesis', (context, message) => {
    expect(() => buildApp(testApp(context))).toThrow(message);
  });

  it("refuses an authorizing identity of another region than the stack's, when the stack's region is known", () => {
    const stack = (region: string) => () =>
      new CollabStack(testApp(), 'SesRegion', {
        env: { account: ACCOUNT, region },
        ses: { identityArn: AUTHORIZING_ARN },
      });

    expect(stack('us-east-1')).toThrow('is in eu-west-1, but the stack deploys to us-east-1');
    expect(stack('eu-west-1')).not.toThrow();
  });
});
