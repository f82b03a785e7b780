/**
 * The grant check itself (local/grant-check.ts): a command outside the grants of the route that sends it is
 * refused as AWS refuses it and recorded with the route, the command and the missing grant. Every other connected
 * test runs under it (test/support/grant-check-setup.ts); these show that it can fail.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { AccessDeniedException, runAsRoute, takeViolations } from '../../local/grant-check';
import { handler as createWorkspace } from '../../functions/workspace/create';
import { handler as getRecordings } from '../../functions/recordings/get';
import { handler as addUsers } from '../../functions/users/add';
import { TABLE_NAME, db } from '../../shared/db/client';
import { grantsFor } from '../../shared/grants';
import { findRoute } from '../../shared/routes';
import { newTenant } from '../support/fixtures';
import { invoke } from '../support/invoke';
import { uniqueEmail } from '../support/ids';

/** What the listing routes did before the page-token key moved to a deploy task: create it on first use. */
async function getOrCreateOnFirstUse(name: string): Promise<void> {
  const key = { pk: 'SYSTEM', sk: `SECRET#${name}` };
  const { Item } = await db.send(new GetCommand({ TableName: TABLE_NAME, Key: key }));
  if (Item !== undefined) return;
  try {
    await db.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: { ...key, value: 'x' },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

describe('the grant check', () => {
  afterEach(() => {
    // These tests leave violations on purpose; the shared afterEach must not see them.
    takeViolations();
  });

  it('refuses a read-only listing route that creates the page-token key on first use, as AWS would', async () => {
    const attempt = runAsRoute('/v2/users/get', () => getOrCreateOnFirstUse('first-use-check'));

    await expect(attempt).rejects.toBeInstanceOf(AccessDeniedException);
    expect(takeViolations()).toEqual([
      {
        caller: 'POST /v2/users/get',
        command: 'dynamodb:PutItem',
        missing: [{ action: 'dynamodb:PutItem', resource: 'table', partitionKey: 'SYSTEM' }],
      },
    ]);
  });

  it('lets a read-only route read the key the deploy task created', async () => {
    await runAsRoute('/v2/users/get', () =>
      db.send(new GetCommand({ TableName: TABLE_NAME, Key: { pk: 'SYSTEM', sk: 'SECRET#page-token' } })),
    );

    expect(takeViolations()).toEqual([]);
  });

  it('fails a real handler run under a deliberately wrong grant: an index left out', async () => {
    const tenant = await newTenant();
    const route = findRoute('/v2/recordings/get');
    const withoutGsi1 = grantsFor({
      table: 'read',
      indexes: (route?.indexes ?? []).filter((index) => index !== 'gsi1'),
    });

    const response = await invoke(
      getRecordings,
      '/v2/recordings/get',
      { organizationId: 'org' },
      { headers: tenant.apiKeyHeaders, grants: withoutGsi1 },
    );

    expect(response.statusCode).toBe(500);
    expect(takeViolations()).toEqual([
      {
        caller: 'POST /v2/recordings/get',
        command: 'dynamodb:Query',
        missing: [{ action: 'dynamodb:Query', resource: 'index/gsi1' }],
      },
    ]);
  });

  it('fails a writing handler run with read-only grants, naming the writes of its transaction', async () => {
    const tenant = await newTenant();

    const response = await invoke(
      addUsers,
      '/v2/users/add',
      { organizationId: 'org', createOrganization: true, users: [{ userId: 'u1' }] },
      {
        headers: tenant.apiKeyHeaders,
        grants: grantsFor({ table: 'read' }),
      },
    );
    const missing = takeViolations().flatMap((violation) => violation.missing.map((permission) => permission.action));

    expect(response.statusCode).toBe(500);
    expect(missing.length).toBeGreaterThan(0);
    expect(
      missing.every((action) =>
        [
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:ConditionCheckItem',
          'dynamodb:BatchWriteItem',
        ].includes(action),
      ),
    ).toBe(true);
  });

  it('fails a handler that encrypts under grants without the KMS action', async () => {
    const withoutKms = grantsFor({ table: 'write' });

    const response = await invoke(
      createWorkspace,
      '/v2/workspace/create',
      { ownerEmail: uniqueEmail() },
      { grants: withoutKms },
    );

    expect(response.statusCode).toBe(500);
    expect(takeViolations()).toEqual([
      {
        caller: 'POST /v2/workspace/create',
        command: 'kms:GenerateDataKey',
        missing: [{ action: 'kms:GenerateDataKey', resource: 'key' }],
      },
    ]);
  });

  it('lets a read-only route write its idempotency records and nothing else', async () => {
    const record = { pk: 'IDEMPOTENCY#/v2/users/get#x', sk: 'IDEMPOTENCY' };

    await runAsRoute('/v2/users/get', () => db.send(new PutCommand({ TableName: TABLE_NAME, Item: record })));
    const other = runAsRoute('/v2/users/get', () =>
      db.send(new PutCommand({ TableName: TABLE_NAME, Item: { pk: 'T#key#IDEMPOTENCY#x', sk: 'IDEMPOTENCY' } })),
    );

    await expect(other).rejects.toBeInstanceOf(AccessDeniedException);
    expect(takeViolations()).toEqual([
      {
        caller: 'POST /v2/users/get',
        command: 'dynamodb:PutItem',
        missing: [{ action: 'dynamodb:PutItem', resource: 'table', partitionKey: 'T#key#IDEMPOTENCY#x' }],
      },
    ]);
  });

  it('gives a path with no route no access at all', async () => {
    const attempt = runAsRoute('/v2/no/such/route', () =>
      db.send(new GetCommand({ TableName: TABLE_NAME, Key: { pk: 'x', sk: 'y' } })),
    );

    await expect(attempt).rejects.toBeInstanceOf(AccessDeniedException);
    expect(takeViolations()).toEqual([
      {
        caller: 'POST /v2/no/such/route',
        command: 'dynamodb:GetItem',
        missing: [{ action: 'dynamodb:GetItem', resource: 'table', partitionKey: 'x' }],
      },
    ]);
  });

  it('refuses a command on another table, even for a route that writes', async () => {
    const attempt = runAsRoute('/v2/users/add', () =>
      db.send(new GetCommand({ TableName: 'another-table', Key: { pk: 'x', sk: 'y' } })),
    );

    await expect(attempt).rejects.toBeInstanceOf(AccessDeniedException);
    expect(takeViolations()[0].missing).toEqual([
      { action: 'dynamodb:GetItem', resource: 'table another-table', partitionKey: 'x' },
    ]);
  });
});
