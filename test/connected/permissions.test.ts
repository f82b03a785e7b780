import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler as addHandler } from '../../functions/permissions/add';
import { handler as getHandler } from '../../functions/permissions/get';
import { handler as removeHandler } from '../../functions/permissions/remove';
import { batchWrite, putRequest } from '../../shared/db/batch';
import { TABLE_NAME, db } from '../../shared/db/client';
import { grantItem, grantKey, listActiveGrants, type Grant, type Resource } from '../../shared/db/permission';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint } from '../support/invoke';
import { uniqueId } from '../support/ids';

const add = endpoint(addHandler, '/v2/auth/permissions/add');
const get = endpoint(getHandler, '/v2/auth/permissions/get');
const remove = endpoint(removeHandler, '/v2/auth/permissions/remove');

const inOneHour = () => Math.floor(Date.now() / 1000) + 3600;

/** Every grant stored for the user, expired or not (now = 0 makes every expiry lie in the future). */
const storedGrants = (tenant: Tenant, userId: string) => listActiveGrants(tenant.apiKeyId, userId, undefined, 0);

async function storedItem(tenant: Tenant, userId: string, resource: Resource) {
  const { Item } = await db.send(
    new GetCommand({ TableName: TABLE_NAME, Key: grantKey(tenant.apiKeyId, userId, resource) }),
  );
  return Item;
}

function expectInvalid(response: Awaited<ReturnType<typeof add>>, path?: string) {
  expect(response.statusCode).toBe(400);
  expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
  expect(response.body.error?.message).toMatch(/\S/);
  if (path !== undefined) {
    expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path)).toContain(path);
  }
}

let tenant: Tenant;

beforeAll(async () => {
  tenant = await newTenant();
});

describe('add permissions', () => {
  it('grants organization, document and folder access with the editor default and answers without data', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');

    const response = await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: {
        resources: [
          { type: 'organization', id: org },
          { type: 'document', id: 'doc-1', organizationId: org, accessRole: 'viewer' },
          { type: 'folder', id: 'folder-1', organizationId: org },
        ],
      },
    });

    expect(response.statusCode).toBe(200);
    expect(response.body.result).toEqual({ status: 'success', message: 'Permissions added successfully.' });
    const listed = (await get(tenant.apiKeyHeaders, { userId })).body.result?.data;
    expect(listed).toHaveLength(3);
    expect(listed).toEqual(
      expect.arrayContaining([
        { type: 'organization', id: org, organizationId: org, accessRole: 'editor' },
        { type: 'document', id: 'doc-1', organizationId: org, accessRole: 'viewer' },
        { type: 'folder', id: 'folder-1', organizationId: org, accessRole: 'editor' },
      ]),
    );
  });

  it('accepts an organizationId equal to the id for type organization', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');

    const response = await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: { resources: [{ type: 'organization', id: org, organizationId: org, accessRole: 'viewer' }] },
    });

    expect(response.statusCode).toBe(200);
    expect((await storedGrants(tenant, userId)).map((grant) => [grant.organizationId, grant.accessRole])).toEqual([
      [org, 'viewer'],
    ]);
  });

  it('stores expiresAt (seconds) as the TTL and shows it in get', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');
    const expiresAt = inOneHour();

    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: { resources: [{ type: 'organization', id: org, expiresAt }] },
    });

    const item = await storedItem(tenant, userId, { type: 'organization', id: org, organizationId: org });
    expect(item?.ttl).toBe(expiresAt);
    expect((await get(tenant.apiKeyHeaders, { userId })).body.result?.data).toEqual([
      { type: 'organization', id: org, organizationId: org, accessRole: 'editor', expiresAt },
    ]);
  });

  it('replaces role and expiry when a grant is added again', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');
    const resource = { type: 'document', id: 'doc', organizationId: org };
    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: { resources: [{ ...resource, accessRole: 'viewer', expiresAt: inOneHour() }] },
    });

    const response = await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: { resources: [{ ...resource, accessRole: 'editor' }] },
    });

    expect(response.statusCode).toBe(200);
    expect((await get(tenant.apiKeyHeaders, { userId })).body.result?.data).toEqual([
      { ...resource, accessRole: 'editor' },
    ]);
    const item = await storedItem(tenant, userId, { type: 'document', id: 'doc', organizationId: org });
    expect(item?.ttl).toBeUndefined();
    expect(item?.expiresAt).toBeUndefined();
  });

  it('writes 100 resources in one request', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');
    const resources = Array.from({ length: 100 }, (_, i) => ({
      type: 'document',
      id: `doc-${i}`,
      organizationId: org,
    }));

    const response = await add(tenant.apiKeyHeaders, { user: { userId }, permissions: { resources } });

    expect(response.statusCode).toBe(200);
    expect(await storedGrants(tenant, userId)).toHaveLength(100);
  });

  it('allows the same id under another type or organization', async () => {
    const userId = uniqueId('user');

    const response = await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: {
        resources: [
          { type: 'organization', id: 'x' },
          { type: 'document', id: 'x', organizationId: 'x' },
          { type: 'folder', id: 'x', organizationId: 'x' },
          { type: 'document', id: 'x', organizationId: 'y' },
        ],
      },
    });

    expect(response.statusCode).toBe(200);
    expect(await storedGrants(tenant, userId)).toHaveLength(4);
  });

  it.each([
    ['a past expiresAt', { type: 'organization', id: 'o', expiresAt: Math.floor(Date.now() / 1000) - 60 }, 'expiresAt'],
    ['an expiresAt of now', { type: 'organization', id: 'o', expiresAt: Math.floor(Date.now() / 1000) }, 'expiresAt'],
    ['a document without organizationId', { type: 'document', id: 'd' }, 'organizationId'],
    ['a folder without organizationId', { type: 'folder', id: 'f' }, 'organizationId'],
    [
      'an organization whose organizationId differs from its id',
      { type: 'organization', id: 'o', organizationId: 'p' },
      'organizationId',
    ],
  ])('refuses %s with INVALID_ARGUMENT and writes none of the request', async (_, bad, field) => {
    const userId = uniqueId('user');
    const valid = { type: 'organization', id: uniqueId('org') };

    const response = await add(tenant.apiKeyHeaders, { user: { userId }, permissions: { resources: [valid, bad] } });

    expectInvalid(response, `data.permissions.resources.1.${field}`);
    expect(await storedGrants(tenant, userId)).toEqual([]);
  });

  it('refuses a repeated resource, including an organization named with and without organizationId', async () => {
    const userId = uniqueId('user');

    const repeatedDocument = await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: {
        resources: [
          { type: 'document', id: 'd', organizationId: 'o', accessRole: 'viewer' },
          { type: 'document', id: 'd', organizationId: 'o', accessRole: 'editor' },
        ],
      },
    });
    const repeatedOrganization = await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: {
        resources: [
          { type: 'organization', id: 'o' },
          { type: 'organization', id: 'o', organizationId: 'o' },
        ],
      },
    });

    expectInvalid(repeatedDocument, 'data.permissions.resources.1');
    expectInvalid(repeatedOrganization, 'data.permissions.resources.1');
    expect(await storedGrants(tenant, userId)).toEqual([]);
  });

  const resource = { type: 'organization', id: 'org' };
  it.each([
    ['a missing user', { permissions: { resources: [resource] } }, 'data.user'],
    ['a missing user.userId', { user: {}, permissions: { resources: [resource] } }, 'data.user.userId'],
    ['a numeric userId', { user: { userId: 7 }, permissions: { resources: [resource] } }, 'data.user.userId'],
    ['an empty userId', { user: { userId: '' }, permissions: { resources: [resource] } }, 'data.user.userId'],
    [
      'a userId with a control character',
      { user: { userId: 'a\u0000b' }, permissions: { resources: [resource] } },
      'data.user.userId',
    ],
    [
      'a userId of 257 characters',
      { user: { userId: 'u'.repeat(257) }, permissions: { resources: [resource] } },
      'data.user.userId',
    ],
    ['missing permissions', { user: { userId: 'u' } }, 'data.permissions'],
    ['missing resources', { user: { userId: 'u' }, permissions: {} }, 'data.permissions.resources'],
    [
      'resources that are not an array',
      { user: { userId: 'u' }, permissions: { resources: resource } },
      'data.permissions.resources',
    ],
    ['empty resources', { user: { userId: 'u' }, permissions: { resources: [] } }, 'data.permissions.resources'],
    [
      '101 resources',
      {
        user: { userId: 'u' },
        permissions: { resources: Array.from({ length: 101 }, (_, i) => ({ type: 'organization', id: `o${i}` })) },
      },
      'data.permissions.resources',
    ],
    [
      'a missing type',
      { user: { userId: 'u' }, permissions: { resources: [{ id: 'o' }] } },
      'data.permissions.resources.0.type',
    ],
    [
      'an unknown type',
      { user: { userId: 'u' }, permissions: { resources: [{ type: 'workspace', id: 'o' }] } },
      'data.permissions.resources.0.type',
    ],
    [
      'a missing id',
      { user: { userId: 'u' }, permissions: { resources: [{ type: 'organization' }] } },
      'data.permissions.resources.0.id',
    ],
    [
      'a numeric id',
      { user: { userId: 'u' }, permissions: { resources: [{ type: 'organization', id: 3 }] } },
      'data.permissions.resources.0.id',
    ],
    [
      'an unknown accessRole',
      { user: { userId: 'u' }, permissions: { resources: [{ ...resource, accessRole: 'owner' }] } },
      'data.permissions.resources.0.accessRole',
    ],
    [
      'a string expiresAt',
      { user: { userId: 'u' }, permissions: { resources: [{ ...resource, expiresAt: '2099-01-01' }] } },
      'data.permissions.resources.0.expiresAt',
    ],
    [
      'a fractional expiresAt',
      { user: { userId: 'u' }, permissions: { resources: [{ ...resource, expiresAt: 4102444800.5 }] } },
      'data.permissions.resources.0.expiresAt',
    ],
    [
      'an expiresAt in milliseconds',
      { user: { userId: 'u' }, permissions: { resources: [{ ...resource, expiresAt: Date.now() + 3600_000 }] } },
      'data.permissions.resources.0.expiresAt',
    ],
  ])('refuses %s with INVALID_ARGUMENT', async (_, data, path) => {
    const response = await add(tenant.apiKeyHeaders, data);

    expectInvalid(response, path);
    expect(await storedGrants(tenant, 'u')).toEqual([]);
  });
});

describe('get permissions', () => {
  it('returns an empty array for a user without grants', async () => {
    const response = await get(tenant.apiKeyHeaders, { userId: uniqueId('nobody') });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual([]);
  });

  it('filters by organizationId without matching an organization whose id merely starts the same', async () => {
    const userId = uniqueId('user');
    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: {
        resources: [
          { type: 'organization', id: 'acme' },
          { type: 'document', id: 'd1', organizationId: 'acme' },
          { type: 'organization', id: 'acme#DOC' },
          { type: 'document', id: 'd2', organizationId: 'acme-2' },
        ],
      },
    });

    const response = await get(tenant.apiKeyHeaders, { userId, organizationId: 'acme' });

    expect(response.body.result?.data.map((grant: { id: string }) => grant.id).sort()).toEqual(['acme', 'd1']);
  });

  it('never shows an expired grant, even before the TTL purges it', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');
    const expired: Grant = {
      userId,
      type: 'document',
      id: 'old',
      organizationId: org,
      accessRole: 'editor',
      expiresAt: Math.floor(Date.now() / 1000) - 5,
    };
    await batchWrite([putRequest(grantItem(tenant.apiKeyId, expired))]);
    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: { resources: [{ type: 'document', id: 'new', organizationId: org }] },
    });

    const all = await get(tenant.apiKeyHeaders, { userId });
    const inOrganization = await get(tenant.apiKeyHeaders, { userId, organizationId: org });

    expect(await storedGrants(tenant, userId)).toHaveLength(2);
    expect(all.body.result?.data).toEqual([{ type: 'document', id: 'new', organizationId: org, accessRole: 'editor' }]);
    expect(inOrganization.body.result?.data).toEqual(all.body.result?.data);
  });

  it.each([
    ['a missing userId', {}, 'data.userId'],
    ['a numeric userId', { userId: 1 }, 'data.userId'],
    ['a numeric organizationId', { userId: 'u', organizationId: 1 }, 'data.organizationId'],
    ['an empty organizationId', { userId: 'u', organizationId: '' }, 'data.organizationId'],
  ])('refuses %s with INVALID_ARGUMENT', async (_, data, path) => {
    expectInvalid(await get(tenant.apiKeyHeaders, data), path);
  });
});

describe('remove permissions', () => {
  it('removes existing grants and reports the others as not existing, keyed by resource id', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');
    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: {
        resources: [
          { type: 'organization', id: org },
          { type: 'folder', id: 'f', organizationId: org },
        ],
      },
    });

    const response = await remove(tenant.apiKeyHeaders, {
      userId,
      permissions: {
        resources: [
          { type: 'organization', id: org },
          { type: 'document', id: 'never', organizationId: org },
        ],
      },
    });

    expect(response.statusCode).toBe(200);
    expect(response.body.result?.data).toEqual({
      [org]: { success: true, message: 'Permission removed.' },
      never: { success: false, message: 'Permission does not exist.' },
    });
    expect((await storedGrants(tenant, userId)).map((grant) => grant.id)).toEqual(['f']);
  });

  it('matches the type: removing a document grant leaves the folder grant with the same id', async () => {
    const userId = uniqueId('user');
    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: { resources: [{ type: 'folder', id: 'same', organizationId: 'o' }] },
    });

    const response = await remove(tenant.apiKeyHeaders, {
      userId,
      permissions: { resources: [{ type: 'document', id: 'same', organizationId: 'o' }] },
    });

    expect(response.body.result?.data).toEqual({ same: { success: false, message: 'Permission does not exist.' } });
    expect(await storedGrants(tenant, userId)).toHaveLength(1);
  });

  it('deletes an expired grant but reports it as not existing, as get does', async () => {
    const userId = uniqueId('user');
    const expired: Grant = {
      userId,
      type: 'organization',
      id: 'o',
      organizationId: 'o',
      accessRole: 'viewer',
      expiresAt: Math.floor(Date.now() / 1000) - 5,
    };
    await batchWrite([putRequest(grantItem(tenant.apiKeyId, expired))]);

    const response = await remove(tenant.apiKeyHeaders, {
      userId,
      permissions: { resources: [{ type: 'organization', id: 'o' }] },
    });

    expect(response.body.result?.data).toEqual({ o: { success: false, message: 'Permission does not exist.' } });
    expect(await storedGrants(tenant, userId)).toEqual([]);
  });

  it.each([
    [
      'a repeated resource id',
      [
        { type: 'organization', id: 'o' },
        { type: 'document', id: 'o', organizationId: 'o' },
      ],
      'data.permissions.resources',
    ],
    [
      'a document without organizationId',
      [{ type: 'document', id: 'd' }],
      'data.permissions.resources.0.organizationId',
    ],
    [
      'an organization with another organizationId',
      [{ type: 'organization', id: 'o', organizationId: 'p' }],
      'data.permissions.resources.0.organizationId',
    ],
    ['an empty list', [], 'data.permissions.resources'],
    [
      '101 resources',
      Array.from({ length: 101 }, (_, i) => ({ type: 'organization', id: `o${i}` })),
      'data.permissions.resources',
    ],
    ['an unknown type', [{ type: 'space', id: 'o' }], 'data.permissions.resources.0.type'],
  ])('refuses %s with INVALID_ARGUMENT and removes nothing', async (_, resources, path) => {
    const userId = uniqueId('user');
    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: {
        resources: [
          { type: 'organization', id: 'o' },
          { type: 'document', id: 'o', organizationId: 'o' },
        ],
      },
    });

    const response = await remove(tenant.apiKeyHeaders, { userId, permissions: { resources } });

    expectInvalid(response, path);
    expect(await storedGrants(tenant, userId)).toHaveLength(2);
  });

  it.each([
    ['a missing userId', { permissions: { resources: [{ type: 'organization', id: 'o' }] } }, 'data.userId'],
    ['missing permissions', { userId: 'u' }, 'data.permissions'],
    ['missing resources', { userId: 'u', permissions: {} }, 'data.permissions.resources'],
  ])('refuses %s with INVALID_ARGUMENT', async (_, data, path) => {
    expectInvalid(await remove(tenant.apiKeyHeaders, data), path);
  });
});

describe('ids with separators, unicode and maximum length', () => {
  const tricky = [
    'a#b',
    'a|b',
    '100%',
    '~x',
    'USER#x',
    'O#o#DOC#d',
    'PERMS',
    'émoji 🎉 名前',
    'x'.repeat(256),
    'x'.repeat(255) + 'y',
  ];

  it('stores, lists and removes each grant separately', async () => {
    const resources = tricky.flatMap((id) => [
      { type: 'organization', id },
      { type: 'document', id, organizationId: 'o#DOC' },
      { type: 'folder', id: 'f', organizationId: id },
    ]);
    const userId = 'USER#x#PERMS';

    const added = await add(tenant.apiKeyHeaders, { user: { userId }, permissions: { resources } });
    const listed = await get(tenant.apiKeyHeaders, { userId });
    const removed = await remove(tenant.apiKeyHeaders, {
      userId,
      permissions: { resources: tricky.map((id) => ({ type: 'organization', id })) },
    });

    expect(added.statusCode).toBe(200);
    expect(listed.body.result?.data).toHaveLength(resources.length);
    expect(listed.body.result?.data).toEqual(
      expect.arrayContaining(
        resources.map((r) => ({ ...r, organizationId: r.organizationId ?? r.id, accessRole: 'editor' })),
      ),
    );
    expect(Object.keys(removed.body.result?.data).sort()).toEqual([...tricky].sort());
    expect(Object.values(removed.body.result?.data).every((item) => (item as { success: boolean }).success)).toBe(true);
    expect(await storedGrants(tenant, userId)).toHaveLength(resources.length - tricky.length);
  });

  it('keeps users whose ids look like key parts apart', async () => {
    const own = await newTenant();
    const org = uniqueId('org');
    await add(own.apiKeyHeaders, {
      user: { userId: 'u' },
      permissions: { resources: [{ type: 'organization', id: org }] },
    });

    const lookalikes = await Promise.all(
      ['u#PERMS', 'u%23PERMS', 'u#', 'U', 'u '].map((userId) => get(own.apiKeyHeaders, { userId })),
    );

    expect(lookalikes.map((reply) => reply.body.result?.data)).toEqual([[], [], [], [], []]);
    expect((await get(own.apiKeyHeaders, { userId: 'u', organizationId: org })).body.result?.data).toHaveLength(1);
  });
});

describe('tenancy', () => {
  it('hides grants from a sibling key and from another workspace, and lets neither change nor delete them', async () => {
    const userId = uniqueId('user');
    const org = uniqueId('org');
    await add(tenant.apiKeyHeaders, {
      user: { userId },
      permissions: { resources: [{ type: 'organization', id: org, accessRole: 'viewer' }] },
    });
    const others = [await siblingKey(tenant), (await newTenant()).apiKeyHeaders];

    for (const headers of others) {
      const seen = await get(headers, { userId });
      const removed = await remove(headers, {
        userId,
        permissions: { resources: [{ type: 'organization', id: org }] },
      });
      const changed = await add(headers, {
        user: { userId },
        permissions: { resources: [{ type: 'organization', id: org, accessRole: 'editor' }] },
      });

      expect(seen.body.result?.data).toEqual([]);
      expect(removed.body.result?.data).toEqual({ [org]: { success: false, message: 'Permission does not exist.' } });
      expect(changed.statusCode).toBe(200);
      expect((await get(headers, { userId })).body.result?.data).toEqual([
        { type: 'organization', id: org, organizationId: org, accessRole: 'editor' },
      ]);
    }

    expect((await get(tenant.apiKeyHeaders, { userId })).body.result?.data).toEqual([
      { type: 'organization', id: org, organizationId: org, accessRole: 'viewer' },
    ]);
  });
});
