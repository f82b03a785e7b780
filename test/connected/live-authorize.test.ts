/**
 * Authorize Live Session, `/v2/crdt/live/authorize` (decisions §13): the answer the browser needs, the user's access
 * resolved from what is stored now, the editor created empty with `type`, input refused before anything is written,
 * and one tenant's organizations and documents invisible to every other key.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { handler as addCrdt } from '../../functions/crdt/add';
import { handler as authorizeLive } from '../../functions/crdt/live-authorize';
import { handler as getCrdt } from '../../functions/crdt/get';
import { handler as addDocuments } from '../../functions/documents/add';
import { handler as setDisabled } from '../../functions/documents/disablestate-update';
import { handler as addPermissions } from '../../functions/permissions/add';
import { handler as addUsers } from '../../functions/users/add';
import { config } from '../../shared/core/config';
import { batchWrite, putRequest } from '../../shared/db/batch';
import { TABLE_NAME, db } from '../../shared/db/client';
import { readLiveToken } from '../../shared/db/live-token';
import { grantItem } from '../../shared/db/permission';
import { roomOf } from '../../shared/domain/live/sessions';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint, type Credentials, type Invocation } from '../support/invoke';
import { uniqueId } from '../support/ids';

const authorize = endpoint(authorizeLive, '/v2/crdt/live/authorize');
const add = endpoint(addCrdt, '/v2/crdt/add');
const get = endpoint(getCrdt, '/v2/crdt/get');
const addDocument = endpoint(addDocuments, '/v2/organizations/documents/add');
const disable = endpoint(setDisabled, '/v2/organizations/documents/access/disablestate/update');
const grant = endpoint(addPermissions, '/v2/auth/permissions/add');
const members = endpoint(addUsers, '/v2/users/add');

async function must(response: Promise<Invocation>): Promise<Invocation> {
  const done = await response;
  if (done.statusCode !== 200) throw new Error(`setup call failed: ${JSON.stringify(done.body)}`);
  return done;
}

function expectError(response: Invocation, status: string, httpStatus: number, message?: string): void {
  expect(response.body.error?.status).toBe(status);
  expect(response.statusCode).toBe(httpStatus);
  if (message !== undefined) expect(response.body.error?.message).toBe(message);
}

/** How many items the table holds (tests only: requests never scan). */
async function tableSize(): Promise<number> {
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: TABLE_NAME, Select: 'COUNT', ExclusiveStartKey: start }));
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

describe('Authorize Live Session', () => {
  let tenant: Tenant;
  let organizationId: string;
  let documentId: string;

  beforeAll(async () => {
    tenant = await newTenant();
  });

  /** An organization with one document of `accessType`, and `ann` an editor and `vic` a viewer of the organization. */
  async function seed(who: Credentials = tenant, accessType = 'organizationPrivate'): Promise<void> {
    organizationId = uniqueId('org');
    documentId = uniqueId('doc');
    await must(
      addDocument(who, {
        organizationId,
        createOrganization: true,
        documents: [{ documentId, documentName: 'Plan', accessType }],
      }),
    );
    await must(
      members(who, {
        organizationId,
        users: [
          { userId: 'ann', accessRole: 'editor' },
          { userId: 'vic', accessRole: 'viewer' },
        ],
      }),
    );
  }

  const ids = (editorId = 'body') => ({ organizationId, documentId, editorId });

  describe('the answer', () => {
    beforeAll(async () => {
      await seed();
      await must(add(tenant, { ...ids(), type: 'text', data: 'Hello' }));
    });

    it('gives a token bound to the key, editor and user, the room, the URL, the role and the expiry (default one hour)', async () => {
      const before = Date.now();

      const response = await authorize(tenant, { ...ids(), userId: 'ann' });

      const after = Date.now();
      expect(response.statusCode).toBe(200);
      expect(response.body.result).toEqual({
        status: 'success',
        message: 'Live session authorized.',
        data: {
          token: expect.any(String),
          serverUrl: 'ws://localhost/v2/crdt/live',
          room: roomOf(ids()),
          accessRole: 'editor',
          expiresAt: expect.any(Number),
        },
      });
      const { token, expiresAt } = response.body.result?.data as { token: string; expiresAt: number };
      expect(expiresAt).toBeGreaterThanOrEqual(before + 3600 * 1000);
      expect(expiresAt).toBeLessThanOrEqual(after + 3600 * 1000);
      expect(await readLiveToken(token)).toEqual({ apiKeyId: tenant.apiKeyId, ...ids(), userId: 'ann', expiresAt });
    });

    it.each([60, 86_400])('expires after expiresIn = %i seconds', async (expiresIn) => {
      const before = Date.now();

      const response = await authorize(tenant, { ...ids(), userId: 'ann', expiresIn });

      const { token, expiresAt } = response.body.result?.data as { token: string; expiresAt: number };
      expect(expiresAt).toBeGreaterThanOrEqual(before + expiresIn * 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + expiresIn * 1000);
      expect((await readLiveToken(token)).expiresAt).toBe(expiresAt);
    });

    it('answers LIVE_URL as serverUrl when it is set', async () => {
      // Configuration is read once, at load (checked below); the loaded value stands in for a restart here.
      const replaced = jest.replaceProperty(config, 'liveUrl', 'wss://live.example.com/prod');
      try {
        const response = await authorize(tenant, { ...ids(), userId: 'ann' });

        expect(response.body.result?.data.serverUrl).toBe('wss://live.example.com/prod');
      } finally {
        replaced.restore();
      }
    });

    it('reads LIVE_URL as a ws(s) URL without a trailing slash', () => {
      let liveUrl: string | undefined;
      const previous = process.env.LIVE_URL;
      jest.isolateModules(() => {
        process.env.LIVE_URL = 'wss://live.example.com/prod/';
        liveUrl = (require('../../shared/core/config') as { config: typeof config }).config.liveUrl;
      });
      if (previous === undefined) delete process.env.LIVE_URL;
      else process.env.LIVE_URL = previous;

      expect(liveUrl).toBe('wss://live.example.com/prod');
    });

    it('takes the URL host from the domain name the request reached', async () => {
      const { invoke } = await import('../support/invoke');
      const path = '/v2/crdt/live/authorize';
      const response = await invoke(
        async (event, context) =>
          authorizeLive(
            { ...event, requestContext: { ...event.requestContext, domainName: '127.0.0.1:4100' } },
            context,
          ),
        path,
        { ...ids(), userId: 'ann' },
        { headers: tenant.apiKeyHeaders },
      );

      expect(response.body.result?.data.serverUrl).toBe('ws://127.0.0.1:4100/v2/crdt/live');
    });
  });

  describe("the user's access", () => {
    const roleOf = async (userId: string) => {
      const response = await authorize(tenant, { ...ids(), userId });
      return response.statusCode === 200 ? response.body.result?.data.accessRole : response.body.error?.status;
    };

    it('is editor or viewer from organization membership on a document open to the organization', async () => {
      await seed();
      await must(add(tenant, { ...ids(), type: 'text', data: 'x' }));

      expect(await roleOf('ann')).toBe('editor');
      expect(await roleOf('vic')).toBe('viewer');
    });

    it('comes from a document grant for a user outside the organization', async () => {
      await seed();
      await must(add(tenant, { ...ids(), type: 'text', data: 'x' }));
      await must(
        grant(tenant, {
          user: { userId: 'gus' },
          permissions: { resources: [{ type: 'document', id: documentId, organizationId, accessRole: 'viewer' }] },
        }),
      );

      expect(await roleOf('gus')).toBe('viewer');
    });

    it('is denied to an organization member on a restricted document, and given to its document member', async () => {
      await seed(tenant, 'restricted');
      await must(add(tenant, { ...ids(), type: 'text', data: 'x' }));
      await must(members(tenant, { organizationId, documentId, users: [{ userId: 'vic', accessRole: 'editor' }] }));

      const denied = await authorize(tenant, { ...ids(), userId: 'ann' });

      expectError(denied, 'PERMISSION_DENIED', 403, 'User has no access to this document.');
      expect(await roleOf('vic')).toBe('editor');
    });

    it('is denied with an expired grant as the only access', async () => {
      await seed();
      await must(add(tenant, { ...ids(), type: 'text', data: 'x' }));
      // Expired a few seconds ago and not yet purged by the TTL.
      await batchWrite([
        putRequest(
          grantItem(tenant.apiKeyId, {
            userId: 'old',
            type: 'document',
            id: documentId,
            organizationId,
            accessRole: 'editor',
            expiresAt: Math.floor(Date.now() / 1000) - 5,
          }),
        ),
      ]);

      const denied = await authorize(tenant, { ...ids(), userId: 'old' });

      expectError(denied, 'PERMISSION_DENIED', 403, 'User has no access to this document.');
    });

    it('is denied to everyone on a disabled document', async () => {
      await seed();
      await must(add(tenant, { ...ids(), type: 'text', data: 'x' }));
      await must(disable(tenant, { organizationId, documentIds: [documentId], disabled: true }));

      const denied = await authorize(tenant, { ...ids(), userId: 'ann' });

      expectError(denied, 'PERMISSION_DENIED', 403, 'User has no access to this document.');
    });

    it('is denied to a user the tenant never gave access, and then no editor is created', async () => {
      await seed();

      const denied = await authorize(tenant, { ...ids('new'), userId: 'stranger', type: 'text' });

      expectError(denied, 'PERMISSION_DENIED', 403, 'User has no access to this document.');
      expect((await get(tenant, ids('new'))).body.result?.data).toEqual([]);
    });
  });

  describe('the editor', () => {
    beforeEach(async () => {
      await seed();
    });

    it('is NOT_FOUND when it does not exist and no type is sent', async () => {
      const response = await authorize(tenant, { ...ids('missing'), userId: 'ann' });

      expectError(response, 'NOT_FOUND', 404, 'Editor not found.');
      expect((await get(tenant, ids('missing'))).body.result?.data).toEqual([]);
    });

    it.each([
      ['text', ''],
      ['map', {}],
      ['array', []],
      ['xml', ''],
    ])('is created empty as %s with type, and a second authorize joins it', async (type, empty) => {
      const first = await authorize(tenant, { ...ids(), userId: 'ann', type, contentKey: 'default' });
      const created = await get(tenant, { ...ids(), format: 'yjs' });
      const second = await authorize(tenant, { ...ids(), userId: 'vic', type: 'text' });
      const withoutType = await authorize(tenant, { ...ids(), userId: 'ann' });

      expect(first.statusCode).toBe(200);
      expect(created.body.result?.data).toEqual([
        expect.objectContaining({ id: 'body', data: empty, lastUpdatedBy: 'ann' }),
      ]);
      expect(second.statusCode).toBe(200);
      expect(second.body.result?.data).toMatchObject({ room: first.body.result?.data.room, accessRole: 'viewer' });
      expect(withoutType.statusCode).toBe(200);
      // Joining changed nothing: still the editor the first authorize created, of its type.
      expect((await get(tenant, { ...ids(), format: 'yjs' })).body.result?.data).toEqual(created.body.result?.data);
    });

    it('keeps an existing editor as it is when type is sent', async () => {
      await must(add(tenant, { ...ids(), type: 'text', data: 'Hello', userId: 'ann' }));
      const before = await get(tenant, { ...ids(), format: 'yjs' });

      const response = await authorize(tenant, { ...ids(), userId: 'vic', type: 'map' });

      expect(response.statusCode).toBe(200);
      expect((await get(tenant, { ...ids(), format: 'yjs' })).body.result?.data).toEqual(before.body.result?.data);
    });

    it('is created once when two authorizes with type race, and both join it', async () => {
      const both = await Promise.all([
        authorize(tenant, { ...ids(), userId: 'ann', type: 'text' }),
        authorize(tenant, { ...ids(), userId: 'vic', type: 'text' }),
      ]);

      expect(both.map((response) => response.statusCode)).toEqual([200, 200]);
      expect((await get(tenant, ids())).body.result?.data).toEqual([expect.objectContaining({ id: 'body', data: '' })]);
    });
  });

  describe('unknown organization or document', () => {
    beforeAll(async () => {
      await seed();
    });

    it('is NOT_FOUND for an organization that does not exist', async () => {
      const response = await authorize(tenant, {
        ...ids(),
        organizationId: uniqueId('org'),
        userId: 'ann',
        type: 'text',
      });

      expectError(response, 'NOT_FOUND', 404, 'Organization not found.');
    });

    it('is NOT_FOUND for a document that does not exist, and creates nothing', async () => {
      const response = await authorize(tenant, { ...ids(), documentId: 'nope', userId: 'ann', type: 'text' });

      expectError(response, 'NOT_FOUND', 404, 'Document not found.');
      expect((await get(tenant, { organizationId, documentId: 'nope' })).body.result?.data).toEqual([]);
    });
  });

  describe('input', () => {
    beforeAll(async () => {
      await seed();
    });

    const valid = () => ({ ...ids('fresh'), userId: 'ann', type: 'text' });
    const without = (field: string) => Object.fromEntries(Object.entries(valid()).filter(([name]) => name !== field));

    it.each([
      ['no organizationId', () => without('organizationId'), 'data.organizationId'],
      ['no documentId', () => without('documentId'), 'data.documentId'],
      ['no editorId', () => without('editorId'), 'data.editorId'],
      ['no userId', () => without('userId'), 'data.userId'],
      ['a numeric organizationId', () => ({ ...valid(), organizationId: 1 }), 'data.organizationId'],
      ['an empty documentId', () => ({ ...valid(), documentId: '' }), 'data.documentId'],
      ['a numeric editorId', () => ({ ...valid(), editorId: 7 }), 'data.editorId'],
      ['an object userId', () => ({ ...valid(), userId: { id: 'ann' } }), 'data.userId'],
      ['an unknown type', () => ({ ...valid(), type: 'richtext' }), 'data.type'],
      ['a numeric contentKey', () => ({ ...valid(), contentKey: 3 }), 'data.contentKey'],
      ['expiresIn under 60', () => ({ ...valid(), expiresIn: 59 }), 'data.expiresIn'],
      ['expiresIn over 86,400', () => ({ ...valid(), expiresIn: 86_401 }), 'data.expiresIn'],
      ['a fractional expiresIn', () => ({ ...valid(), expiresIn: 120.5 }), 'data.expiresIn'],
      ['a string expiresIn', () => ({ ...valid(), expiresIn: '3600' }), 'data.expiresIn'],
    ])('refuses %s with INVALID_ARGUMENT and writes nothing', async (_, body, field) => {
      const before = await tableSize();

      const response = await authorize(tenant, body());

      expectError(response, 'INVALID_ARGUMENT', 400);
      expect(JSON.stringify(response.body.error)).toContain(field);
      expect(await tableSize()).toBe(before);
    });

    it('refuses a body without data', async () => {
      const response = await authorize(tenant, undefined);

      expectError(response, 'INVALID_ARGUMENT', 400);
    });
  });

  describe('tenancy', () => {
    let sibling: Record<string, string>;
    let other: Tenant;

    beforeAll(async () => {
      sibling = await siblingKey(tenant);
      other = await newTenant();
    });

    it.each([
      ['a second key of the same workspace', () => sibling],
      ['a key of another workspace', () => other],
    ])("shows %s none of the first key's organizations and documents, and creates no editor there", async (_, who) => {
      await seed();
      await must(add(tenant, { ...ids(), type: 'text', data: 'mine' }));

      const existing = await authorize(who(), { ...ids(), userId: 'ann' });
      const creating = await authorize(who(), { ...ids('theirs'), userId: 'ann', type: 'text' });

      expectError(existing, 'NOT_FOUND', 404, 'Organization not found.');
      expectError(creating, 'NOT_FOUND', 404, 'Organization not found.');
      expect((await get(tenant, ids('theirs'))).body.result?.data).toEqual([]);
      expect((await get(who(), ids('theirs'))).body.result?.data).toEqual([]);
    });

    it("is NOT_FOUND for the first key's document in an organization of the same id the other key has", async () => {
      await seed();
      await must(add(tenant, { ...ids(), type: 'text', data: 'mine' }));
      // The other key's own organization of the same id, with ann in it, but not the document.
      await must(
        members(sibling, {
          organizationId,
          createOrganization: true,
          users: [{ userId: 'ann', accessRole: 'editor' }],
        }),
      );

      const response = await authorize(sibling, { ...ids(), userId: 'ann', type: 'text' });

      expectError(response, 'NOT_FOUND', 404, 'Document not found.');
      expect((await get(sibling, ids())).body.result?.data).toEqual([]);
      expect((await get(tenant, ids())).body.result?.data).toEqual([expect.objectContaining({ data: 'mine' })]);
    });
  });
});
