import { randomUUID } from 'node:crypto';
import { handler as addHandler } from '../../functions/documents/add';
import { handler as getHandler } from '../../functions/documents/get';
import { handler as updateHandler } from '../../functions/documents/update';
import { handler as disableHandler } from '../../functions/documents/disablestate-update';
import { folderExists, getDocument, organizationExists } from '../../shared/db/organization';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { invoke, endpoint, type Invocation } from '../support/invoke';
import { uniqueId } from '../support/ids';

type Headers = Record<string, string>;
type DocumentItem = {
  documentId: string;
  documentName: string;
  folderId?: string;
  accessType: string;
  disabled: boolean;
  metadata?: Record<string, string>;
};

const V1_DISABLE = '/v1/organizations/documents/access/disablestate/update';
const V2_DISABLE = '/v2/organizations/documents/access/disablestate/update';

const add = endpoint(addHandler, '/v2/organizations/documents/add');
const get = endpoint(getHandler, '/v2/organizations/documents/get');
const update = endpoint(updateHandler, '/v2/organizations/documents/update');
const disable = (headers: Headers, data: unknown, path = V2_DISABLE) => invoke(disableHandler, path, data, { headers });

const ids = (response: Invocation) =>
  (response.body.result?.data as DocumentItem[]).map((document) => document.documentId);

function expectInvalid(response: Invocation): void {
  expect(response.statusCode).toBe(400);
  expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
}

/** Adds `documentIds` (in a new organization unless given) and returns the organization id. */
async function seed(
  tenant: Tenant,
  documentIds: string[],
  extra: Record<string, unknown> = {},
  organizationId = uniqueId('org'),
): Promise<string> {
  for (let i = 0; i < documentIds.length; i += 100) {
    const documents = documentIds.slice(i, i + 100).map((documentId) => ({ documentId, ...extra }));
    const response = await add(tenant.apiKeyHeaders, { organizationId, createOrganization: true, documents });
    if (response.statusCode !== 200) throw new Error(`seed failed: ${JSON.stringify(response.body)}`);
  }
  return organizationId;
}

/** Follows page tokens to the end; returns the pages' ids. */
async function allPages(headers: Headers, query: Record<string, unknown>): Promise<string[][]> {
  const pages: string[][] = [];
  let pageToken: string | undefined;
  do {
    const response = await get(headers, { ...query, pageToken });
    expect(response.statusCode).toBe(200);
    pages.push(ids(response));
    pageToken = response.body.result?.pageToken;
  } while (pageToken !== undefined && pages.length < 50);
  return pages;
}

describe('documents', () => {
  let tenant: Tenant;

  beforeAll(async () => {
    tenant = await newTenant();
  });

  describe('add', () => {
    it('adds documents with defaults and returns a batch keyed by documentId', async () => {
      const organizationId = uniqueId('org');

      const response = await add(tenant.apiKeyHeaders, {
        organizationId,
        createOrganization: true,
        documents: [
          { documentId: 'd1', documentName: 'Plan' },
          { documentId: 'd2', accessType: 'restricted' },
        ],
      });

      expect(response.statusCode).toBe(200);
      expect(response.body.result).toMatchObject({ status: 'success', message: expect.any(String) });
      expect(response.body.result?.data).toEqual({
        d1: { success: true, id: 'd1', message: 'Document added.' },
        d2: { success: true, id: 'd2', message: 'Document added.' },
      });
      expect((await get(tenant.apiKeyHeaders, { organizationId })).body.result?.data).toEqual([
        { documentId: 'd1', documentName: 'Plan', accessType: 'organizationPrivate', disabled: false },
        { documentId: 'd2', documentName: '', accessType: 'restricted', disabled: false },
      ]);
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(true);
    });

    it('returns NOT_FOUND and writes nothing when the organization is missing and createOrganization is not true', async () => {
      const organizationId = uniqueId('org');

      const omitted = await add(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', folderId: 'f' }],
      });
      const declined = await add(tenant.apiKeyHeaders, {
        organizationId,
        createOrganization: false,
        documents: [{ documentId: 'd' }],
      });

      for (const response of [omitted, declined]) {
        expect(response.statusCode).toBe(404);
        expect(response.body.error).toEqual({ status: 'NOT_FOUND', message: 'Organization not found.' });
      }
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
      expect(await folderExists(tenant.apiKeyId, organizationId, 'f')).toBe(false);
      expect(await getDocument(tenant.apiKeyId, organizationId, 'd')).toBeUndefined();
    });

    it('adds to an existing organization without createOrganization', async () => {
      const organizationId = await seed(tenant, ['first']);

      const response = await add(tenant.apiKeyHeaders, { organizationId, documents: [{ documentId: 'second' }] });

      expect(response.body.result?.data.second.success).toBe(true);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId }))).toEqual(['first', 'second']);
    });

    it('creates a referenced folder that does not exist', async () => {
      const organizationId = uniqueId('org');

      await add(tenant.apiKeyHeaders, {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'd', folderId: 'new-folder' }],
      });

      expect(await folderExists(tenant.apiKeyId, organizationId, 'new-folder')).toBe(true);
      expect((await get(tenant.apiKeyHeaders, { organizationId, folderId: 'new-folder' })).body.result?.data).toEqual([
        {
          documentId: 'd',
          documentName: '',
          folderId: 'new-folder',
          accessType: 'organizationPrivate',
          disabled: false,
        },
      ]);
    });

    it('updates an existing document with the given fields only, and never re-enables it', async () => {
      const organizationId = uniqueId('org');
      await add(tenant.apiKeyHeaders, {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'd', documentName: 'Old', folderId: 'f', accessType: 'public' }],
      });
      await disable(tenant.apiKeyHeaders, { organizationId, documentIds: ['d'], disabled: true });

      const again = await add(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', documentName: 'New' }],
      });
      const repeated = await add(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', documentName: 'New' }],
      });

      expect(again.body.result?.data).toEqual({ d: { success: true, id: 'd', message: 'Document added.' } });
      expect(repeated.body.result?.data).toEqual(again.body.result?.data);
      expect((await get(tenant.apiKeyHeaders, { organizationId })).body.result?.data).toEqual([
        { documentId: 'd', documentName: 'New', folderId: 'f', accessType: 'public', disabled: true },
      ]);
    });

    it('adds 100 documents in 100 new folders (more than one transaction) completely', async () => {
      const organizationId = uniqueId('org');
      const documents = Array.from({ length: 100 }, (_, i) => ({ documentId: `d${i}`, folderId: `f${i}` }));

      const response = await add(tenant.apiKeyHeaders, { organizationId, createOrganization: true, documents });

      expect(Object.keys(response.body.result?.data)).toHaveLength(100);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId }))).toHaveLength(100);
      expect(await folderExists(tenant.apiKeyId, organizationId, 'f0')).toBe(true);
      expect(await folderExists(tenant.apiKeyId, organizationId, 'f99')).toBe(true);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId, folderId: 'f99' }))).toEqual(['d99']);
    });

    it.each([
      ['a missing organizationId', { organizationId: undefined, documents: [{ documentId: 'd' }] }],
      ['a missing documents', {}],
      ['a document without documentId', { documents: [{ documentName: 'x' }] }],
      ['a numeric organizationId', { organizationId: 7, documents: [{ documentId: 'd' }] }],
      ['documents as an object', { documents: { documentId: 'd' } }],
      ['an empty documents array', { documents: [] }],
      ['a numeric documentId', { documents: [{ documentId: 1 }] }],
      ['an empty documentId', { documents: [{ documentId: '' }] }],
      ['a documentId of 257 characters', { documents: [{ documentId: 'x'.repeat(257) }] }],
      ['a documentId with a control character', { documents: [{ documentId: 'a\u0000b' }] }],
      ['an unknown accessType', { documents: [{ documentId: 'd', accessType: 'secret' }] }],
      ['a string createOrganization', { createOrganization: 'yes', documents: [{ documentId: 'd' }] }],
      ['a numeric folderId', { documents: [{ documentId: 'd', folderId: 3 }] }],
      ['a duplicate documentId', { documents: [{ documentId: 'd' }, { documentId: 'd', documentName: 'x' }] }],
      ['101 documents', { documents: Array.from({ length: 101 }, (_, i) => ({ documentId: `d${i}` })) }],
    ])('rejects %s with INVALID_ARGUMENT and writes nothing', async (_, body) => {
      const organizationId = uniqueId('org');

      const response = await add(tenant.apiKeyHeaders, { organizationId, createOrganization: true, ...body });

      expectInvalid(response);
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
      expect(await getDocument(tenant.apiKeyId, organizationId, 'd')).toBeUndefined();
      expect(await getDocument(tenant.apiKeyId, organizationId, 'd0')).toBeUndefined();
    });

    it('lists every failing field in details.issues', async () => {
      const response = await add(tenant.apiKeyHeaders, { documents: [{ accessType: 'x' }] });

      expectInvalid(response);
      expect(response.body.error?.details.issues.map((issue: { path: string }) => issue.path).sort()).toEqual([
        'data.documents.0.accessType',
        'data.documents.0.documentId',
        'data.organizationId',
      ]);
    });
  });

  describe('get', () => {
    it('returns an empty array for an unknown organization, with no page token', async () => {
      const response = await get(tenant.apiKeyHeaders, { organizationId: uniqueId('org') });

      expect(response.statusCode).toBe(200);
      expect(response.body.result?.data).toEqual([]);
      expect(response.body.result).not.toHaveProperty('pageToken');
    });

    it('pages through an organization in full pages and ends without a token field', async () => {
      const organizationId = await seed(tenant, ['a', 'b', 'c', 'd', 'e']);

      const pages = await allPages(tenant.apiKeyHeaders, { organizationId, pageSize: 2 });

      expect(pages).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    });

    it('gives no token when the last page is exactly full', async () => {
      const organizationId = await seed(tenant, ['a', 'b', 'c', 'd']);

      const pages = await allPages(tenant.apiKeyHeaders, { organizationId, pageSize: 2 });

      expect(pages).toEqual([
        ['a', 'b'],
        ['c', 'd'],
      ]);
    });

    it('returns 1000 documents by default and the rest on the next page', async () => {
      const documentIds = Array.from({ length: 1001 }, (_, i) => `doc-${String(i).padStart(4, '0')}`);
      const organizationId = await seed(tenant, documentIds);

      const first = await get(tenant.apiKeyHeaders, { organizationId });
      const second = await get(tenant.apiKeyHeaders, { organizationId, pageToken: first.body.result?.pageToken });

      expect(ids(first)).toEqual(documentIds.slice(0, 1000));
      expect(ids(second)).toEqual(['doc-1000']);
      expect(second.body.result).not.toHaveProperty('pageToken');
    });

    it('pages through one folder only', async () => {
      const organizationId = await seed(tenant, ['f1', 'f2', 'f3'], { folderId: 'F' });
      await seed(tenant, ['g1', 'loose'], {}, organizationId);
      await add(tenant.apiKeyHeaders, { organizationId, documents: [{ documentId: 'g1', folderId: 'G' }] });

      const pages = await allPages(tenant.apiKeyHeaders, { organizationId, folderId: 'F', pageSize: 2 });

      expect(pages).toEqual([['f1', 'f2'], ['f3']]);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId, folderId: 'G' }))).toEqual(['g1']);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId, folderId: 'unknown' }))).toEqual([]);
    });

    it('fetches named documents in id order, skipping unknown ids and keeping pages full', async () => {
      const organizationId = await seed(tenant, ['a', 'b', 'c', 'd']);

      const pages = await allPages(tenant.apiKeyHeaders, {
        organizationId,
        documentIds: ['d', 'nope', 'b', 'a', 'zz', 'c', 'b'],
        pageSize: 2,
      });

      expect(pages).toEqual([
        ['a', 'b'],
        ['c', 'd'],
      ]);
    });

    it('intersects documentIds with folderId', async () => {
      const organizationId = await seed(tenant, ['in1', 'in2', 'in3'], { folderId: 'F' });
      await seed(tenant, ['out1', 'out2'], { folderId: 'G' }, organizationId);

      const pages = await allPages(tenant.apiKeyHeaders, {
        organizationId,
        folderId: 'F',
        documentIds: ['out1', 'in3', 'in1', 'out2', 'in2'],
        pageSize: 2,
      });

      expect(pages).toEqual([['in1', 'in2'], ['in3']]);
    });

    it.each([
      ['tampered', (token: string) => `${token.slice(0, -2)}xx`],
      ['garbage', () => 'not-a-token'],
      [
        're-signed with a forged body',
        (token: string) =>
          `${Buffer.from('{"t":"x","q":"y","c":{},"e":9e15}').toString('base64url')}.${token.split('.')[1]}`,
      ],
    ])('rejects a %s page token with INVALID_ARGUMENT', async (_, mangle) => {
      const organizationId = await seed(tenant, ['a', 'b']);
      const token = (await get(tenant.apiKeyHeaders, { organizationId, pageSize: 1 })).body.result?.pageToken as string;

      expectInvalid(await get(tenant.apiKeyHeaders, { organizationId, pageSize: 1, pageToken: mangle(token) }));
    });

    it('rejects a page token used for another query', async () => {
      const organizationId = await seed(tenant, ['a', 'b'], { folderId: 'F' });
      const token = (await get(tenant.apiKeyHeaders, { organizationId, pageSize: 1 })).body.result?.pageToken as string;
      const otherOrganization = await seed(tenant, ['a', 'b']);

      const replies = await Promise.all([
        get(tenant.apiKeyHeaders, { organizationId: otherOrganization, pageSize: 1, pageToken: token }),
        get(tenant.apiKeyHeaders, { organizationId, folderId: 'F', pageSize: 1, pageToken: token }),
        get(tenant.apiKeyHeaders, { organizationId, documentIds: ['a', 'b'], pageSize: 1, pageToken: token }),
      ]);

      for (const reply of replies) expectInvalid(reply);
      expect((await get(tenant.apiKeyHeaders, { organizationId, pageSize: 1, pageToken: token })).statusCode).toBe(200);
    });

    it('binds a documentIds token to the set of ids, whatever their order', async () => {
      const organizationId = await seed(tenant, ['a', 'b', 'c']);
      const token = (await get(tenant.apiKeyHeaders, { organizationId, documentIds: ['a', 'b', 'c'], pageSize: 1 }))
        .body.result?.pageToken;

      const reordered = await get(tenant.apiKeyHeaders, {
        organizationId,
        documentIds: ['c', 'a', 'b'],
        pageSize: 1,
        pageToken: token,
      });
      const fewer = await get(tenant.apiKeyHeaders, {
        organizationId,
        documentIds: ['a', 'b'],
        pageSize: 1,
        pageToken: token,
      });

      expect(ids(reordered)).toEqual(['b']);
      expectInvalid(fewer);
    });

    it.each([
      ['a missing organizationId', { organizationId: undefined }],
      ['a numeric organizationId', { organizationId: 1 }],
      ['pageSize 0', { pageSize: 0 }],
      ['pageSize 1001', { pageSize: 1001 }],
      ['a fractional pageSize', { pageSize: 1.5 }],
      ['a string pageSize', { pageSize: '10' }],
      ['documentIds as a string', { documentIds: 'a' }],
      ['101 documentIds', { documentIds: Array.from({ length: 101 }, (_, i) => `d${i}`) }],
      ['an empty folderId', { folderId: '' }],
      ['an empty pageToken', { pageToken: '' }],
    ])('rejects %s with INVALID_ARGUMENT', async (_, body) => {
      expectInvalid(await get(tenant.apiKeyHeaders, { organizationId: 'o', ...body }));
    });
  });

  describe('update', () => {
    it('changes only the fields present', async () => {
      const organizationId = uniqueId('org');
      await add(tenant.apiKeyHeaders, {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'd', documentName: 'Old', folderId: 'F', accessType: 'public' }],
      });

      const named = await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', documentName: 'New' }],
      });
      await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', metadata: { team: 'a#b', empty: '' } }],
      });

      expect(named.body.result?.data).toEqual({ d: { success: true, id: 'd', message: 'Document updated.' } });
      expect((await get(tenant.apiKeyHeaders, { organizationId })).body.result?.data).toEqual([
        {
          documentId: 'd',
          documentName: 'New',
          folderId: 'F',
          accessType: 'public',
          disabled: false,
          metadata: { team: 'a#b', empty: '' },
        },
      ]);
    });

    it('replaces metadata as a whole and sets the access type', async () => {
      const organizationId = await seed(tenant, ['d']);
      await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', metadata: { a: '1', b: '2' } }],
      });

      await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', metadata: { c: '3' }, accessType: 'restricted' }],
      });

      expect(await getDocument(tenant.apiKeyId, organizationId, 'd')).toMatchObject({
        metadata: { c: '3' },
        accessType: 'restricted',
      });
    });

    it('moves a document to a folder that does not exist, creating it', async () => {
      const organizationId = await seed(tenant, ['d'], { folderId: 'old' });

      const response = await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', folderId: 'new' }],
      });

      expect(response.body.result?.data.d.success).toBe(true);
      expect(await folderExists(tenant.apiKeyId, organizationId, 'new')).toBe(true);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId, folderId: 'new' }))).toEqual(['d']);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId, folderId: 'old' }))).toEqual([]);
    });

    it('reports an unknown document per item, creates neither it nor its folder, and keeps the overall status', async () => {
      const organizationId = await seed(tenant, ['known']);

      const response = await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [
          { documentId: 'known', documentName: 'K' },
          { documentId: 'ghost', documentName: 'G', folderId: 'ghost-folder' },
        ],
      });

      expect(response.statusCode).toBe(200);
      expect(response.body.result?.status).toBe('success');
      expect(response.body.result?.data).toEqual({
        known: { success: true, id: 'known', message: 'Document updated.' },
        ghost: { success: false, id: 'ghost', message: 'Document does not exist.' },
      });
      expect(await getDocument(tenant.apiKeyId, organizationId, 'ghost')).toBeUndefined();
      expect(await folderExists(tenant.apiKeyId, organizationId, 'ghost-folder')).toBe(false);
    });

    it('reports every document of an unknown organization as not existing', async () => {
      const organizationId = uniqueId('org');

      const response = await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', documentName: 'x' }],
      });

      expect(response.body.result?.data).toEqual({
        d: { success: false, id: 'd', message: 'Document does not exist.' },
      });
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
    });

    it('strips unknown fields: they can change neither disabled state nor server fields', async () => {
      const organizationId = await seed(tenant, ['d']);
      const before = await getDocument(tenant.apiKeyId, organizationId, 'd');

      const response = await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [
          { documentId: 'd', disabled: true, createdAt: 1, organizationId: 'other', pk: 'x', documentName: 'n' },
        ],
      });

      const after = await getDocument(tenant.apiKeyId, organizationId, 'd');
      expect(response.body.result?.data.d.success).toBe(true);
      expect(after).toMatchObject({ disabled: false, createdAt: before?.createdAt, organizationId, documentName: 'n' });
    });

    it.each([
      ['a missing organizationId', { organizationId: undefined }],
      ['a missing documents', { documents: undefined }],
      ['an empty documents array', { documents: [] }],
      ['a document without documentId', { documents: [{ documentName: 'x' }] }],
      ['a numeric documentName', { documents: [{ documentId: 'd', documentName: 5 }] }],
      ['a non-string metadata value', { documents: [{ documentId: 'd', metadata: { a: 1 } }] }],
      ['metadata as an array', { documents: [{ documentId: 'd', metadata: ['a'] }] }],
      [
        '51 metadata entries',
        {
          documents: [
            { documentId: 'd', metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
          ],
        },
      ],
      ['a metadata value of 1001 characters', { documents: [{ documentId: 'd', metadata: { a: 'x'.repeat(1001) } }] }],
      ['an unknown accessType', { documents: [{ documentId: 'd', accessType: 'everyone' }] }],
      ['a null folderId', { documents: [{ documentId: 'd', folderId: null }] }],
      [
        'a duplicate documentId',
        {
          documents: [
            { documentId: 'd', documentName: 'a' },
            { documentId: 'd', documentName: 'b' },
          ],
        },
      ],
      [
        '101 documents',
        {
          documents: Array.from({ length: 101 }, (_, i) => ({
            documentId: i === 0 ? 'd' : `d${i}`,
            documentName: 'x',
          })),
        },
      ],
    ])('rejects %s with INVALID_ARGUMENT and changes nothing', async (_, body) => {
      const organizationId = await seed(tenant, ['d']);
      const before = await getDocument(tenant.apiKeyId, organizationId, 'd');

      const response = await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'd', documentName: 'changed' }],
        ...body,
      });

      expectInvalid(response);
      expect(await getDocument(tenant.apiKeyId, organizationId, 'd')).toEqual(before);
    });
  });

  describe('disable state', () => {
    it.each([V1_DISABLE, V2_DISABLE])('disables and re-enables documents at %s', async (path) => {
      const organizationId = await seed(tenant, ['a', 'b', 'c']);

      const disabled = await disable(
        tenant.apiKeyHeaders,
        { organizationId, documentIds: ['a', 'b'], disabled: true },
        path,
      );
      const afterDisable = (await get(tenant.apiKeyHeaders, { organizationId })).body.result?.data as DocumentItem[];
      const enabled = await disable(
        tenant.apiKeyHeaders,
        { organizationId, documentIds: ['a'], disabled: false },
        path,
      );

      expect(disabled.statusCode).toBe(200);
      expect(disabled.body.result?.data).toEqual({
        a: { success: true, disabled: true, message: 'Document disabled.' },
        b: { success: true, disabled: true, message: 'Document disabled.' },
      });
      expect(afterDisable.map((document) => [document.documentId, document.disabled])).toEqual([
        ['a', true],
        ['b', true],
        ['c', false],
      ]);
      expect(enabled.body.result?.data).toEqual({
        a: { success: true, disabled: false, message: 'Document enabled.' },
      });
      expect((await getDocument(tenant.apiKeyId, organizationId, 'a'))?.disabled).toBe(false);
      expect((await getDocument(tenant.apiKeyId, organizationId, 'b'))?.disabled).toBe(true);
    });

    it('reports an unknown document per item and does not create it', async () => {
      const organizationId = await seed(tenant, ['a']);

      const response = await disable(tenant.apiKeyHeaders, {
        organizationId,
        documentIds: ['a', 'ghost'],
        disabled: true,
      });

      expect(response.statusCode).toBe(200);
      expect(response.body.result?.data).toEqual({
        a: { success: true, disabled: true, message: 'Document disabled.' },
        ghost: { success: false, message: 'Document does not exist.' },
      });
      expect(await getDocument(tenant.apiKeyId, organizationId, 'ghost')).toBeUndefined();
    });

    it.each([
      ['a missing organizationId', { organizationId: undefined }],
      ['a missing documentIds', { documentIds: undefined }],
      ['a missing disabled', { disabled: undefined }],
      ['a string disabled', { disabled: 'true' }],
      ['documentIds as a string', { documentIds: 'a' }],
      ['an empty documentIds array', { documentIds: [] }],
      ['a numeric documentId', { documentIds: [1] }],
      ['a duplicate documentId', { documentIds: ['a', 'a'] }],
      ['101 documentIds', { documentIds: ['a', ...Array.from({ length: 100 }, (_, i) => `d${i}`)] }],
    ])('rejects %s with INVALID_ARGUMENT and changes nothing', async (_, body) => {
      const organizationId = await seed(tenant, ['a']);

      const response = await disable(tenant.apiKeyHeaders, {
        organizationId,
        documentIds: ['a'],
        disabled: true,
        ...body,
      });

      expectInvalid(response);
      expect((await getDocument(tenant.apiKeyId, organizationId, 'a'))?.disabled).toBe(false);
    });
  });

  describe('ids with separators', () => {
    const awkward = [
      'a#b',
      'a',
      'b',
      'a|b',
      'a%23b',
      '%',
      '~a',
      'USER#x',
      'DOC#a',
      'FOLDER#a',
      'ünï©ødé 文档 😀',
      'x'.repeat(256),
      '𝄞'.repeat(256),
    ];

    it('stores, lists and filters documents and folders with awkward ids without collisions', async () => {
      const organizationId = `org#|%~ USER#x ${randomUUID()}`;
      const documents = awkward.map((documentId, i) => ({
        documentId,
        documentName: `name ${i}`,
        folderId: awkward[(i + 1) % awkward.length],
      }));

      const added = await add(tenant.apiKeyHeaders, { organizationId, createOrganization: true, documents });
      const listed = (await get(tenant.apiKeyHeaders, { organizationId })).body.result?.data as DocumentItem[];

      expect(Object.keys(added.body.result?.data).sort()).toEqual([...awkward].sort());
      expect(listed.map((d) => [d.documentId, d.documentName, d.folderId]).sort()).toEqual(
        documents.map((d) => [d.documentId, d.documentName, d.folderId]).sort(),
      );
      for (const document of documents) {
        expect(ids(await get(tenant.apiKeyHeaders, { organizationId, folderId: document.folderId }))).toEqual([
          document.documentId,
        ]);
      }
      expect(
        ids(await get(tenant.apiKeyHeaders, { organizationId, documentIds: ['a#b', 'a%23b', 'a'] })).sort(),
      ).toEqual(['a', 'a#b', 'a%23b']);
    });

    it('updates and disables one awkward id without touching its look-alikes', async () => {
      const organizationId = await seed(tenant, awkward);

      await update(tenant.apiKeyHeaders, {
        organizationId,
        documents: [{ documentId: 'a#b', documentName: 'only me' }],
      });
      await disable(tenant.apiKeyHeaders, { organizationId, documentIds: ['a%23b'], disabled: true });

      const listed = (await get(tenant.apiKeyHeaders, { organizationId })).body.result?.data as DocumentItem[];
      expect(listed.filter((d) => d.documentName === 'only me').map((d) => d.documentId)).toEqual(['a#b']);
      expect(listed.filter((d) => d.disabled).map((d) => d.documentId)).toEqual(['a%23b']);
    });

    it('keeps organizations whose ids share a prefix apart', async () => {
      const base = uniqueId('org');
      await seed(tenant, ['in-base'], {}, base);
      await seed(tenant, ['in-hash'], {}, `${base}#DOC#x`);

      expect(ids(await get(tenant.apiKeyHeaders, { organizationId: base }))).toEqual(['in-base']);
      expect(ids(await get(tenant.apiKeyHeaders, { organizationId: `${base}#DOC#x` }))).toEqual(['in-hash']);
    });
  });

  describe('tenancy', () => {
    let organizationId: string;
    const outsiders: Array<[string, () => Promise<Headers>]> = [
      ['another key of the same workspace', () => siblingKey(tenant)],
      ['a key of another workspace', async () => (await newTenant()).apiKeyHeaders],
    ];

    beforeEach(async () => {
      organizationId = uniqueId('org');
      await add(tenant.apiKeyHeaders, {
        organizationId,
        createOrganization: true,
        documents: [{ documentId: 'd', documentName: 'Mine', folderId: 'F' }],
      });
    });

    it.each(outsiders)('%s cannot list or fetch the documents', async (_, headersOf) => {
      const headers = await headersOf();

      const replies = await Promise.all([
        get(headers, { organizationId }),
        get(headers, { organizationId, folderId: 'F' }),
        get(headers, { organizationId, documentIds: ['d'] }),
      ]);

      for (const reply of replies) expect(reply.body.result?.data).toEqual([]);
    });

    it.each(outsiders)('%s cannot update or disable the documents', async (_, headersOf) => {
      const headers = await headersOf();

      const updated = await update(headers, {
        organizationId,
        documents: [{ documentId: 'd', documentName: 'Theirs', folderId: 'G' }],
      });
      const disabled = await disable(headers, { organizationId, documentIds: ['d'], disabled: true }, V1_DISABLE);

      expect(updated.body.result?.data.d).toEqual({ success: false, id: 'd', message: 'Document does not exist.' });
      expect(disabled.body.result?.data.d).toEqual({ success: false, message: 'Document does not exist.' });
      expect(await getDocument(tenant.apiKeyId, organizationId, 'd')).toMatchObject({
        documentName: 'Mine',
        folderId: 'F',
        disabled: false,
      });
      expect(await folderExists(tenant.apiKeyId, organizationId, 'G')).toBe(false);
    });

    it.each(outsiders)(
      '%s cannot add into the organization, and creating its own leaves the first untouched',
      async (_, headersOf) => {
        const headers = await headersOf();

        const refused = await add(headers, {
          organizationId,
          documents: [{ documentId: 'd', documentName: 'Theirs' }],
        });
        const own = await add(headers, {
          organizationId,
          createOrganization: true,
          documents: [{ documentId: 'd', documentName: 'Theirs' }],
        });
        const theirs = await get(headers, { organizationId });

        expect(refused.statusCode).toBe(404);
        expect(own.statusCode).toBe(200);
        expect(theirs.body.result?.data).toEqual([
          { documentId: 'd', documentName: 'Theirs', accessType: 'organizationPrivate', disabled: false },
        ]);
        expect((await getDocument(tenant.apiKeyId, organizationId, 'd'))?.documentName).toBe('Mine');
      },
    );

    it('refuses a page token issued to another key', async () => {
      const paged = await seed(tenant, ['a', 'b']);
      const token = (await get(tenant.apiKeyHeaders, { organizationId: paged, pageSize: 1 })).body.result?.pageToken;

      const sibling = await get(await siblingKey(tenant), { organizationId: paged, pageSize: 1, pageToken: token });
      const stranger = await get((await newTenant()).apiKeyHeaders, {
        organizationId: paged,
        pageSize: 1,
        pageToken: token,
      });

      expectInvalid(sibling);
      expectInvalid(stranger);
    });
  });
});
