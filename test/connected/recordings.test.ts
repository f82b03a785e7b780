import { handler as addHandler } from '../../functions/recordings/add';
import { handler as getHandler } from '../../functions/recordings/get';
import { getDocument, organizationExists } from '../../shared/db/organization';
import { getRecordings } from '../../shared/db/recording';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { endpoint, type Invocation } from '../support/invoke';
import { uniqueId } from '../support/ids';

type Headers = Record<string, string>;
type Recording = {
  annotationId: string;
  metadata: { apiKey: string; organizationId: string; documentId: string };
  [field: string]: unknown;
};

const add = endpoint(addHandler, '/v2/recordings/add');
const get = endpoint(getHandler, '/v2/recordings/get');

const ids = (response: Invocation) =>
  (response.body.result?.data as Recording[]).map((recording) => recording.annotationId);

function expectInvalid(response: Invocation): void {
  expect(response.statusCode).toBe(400);
  expect(response.body.error?.status).toBe('INVALID_ARGUMENT');
}

/** A full recording annotation as a client sends it. */
const sample = (annotationId: string, extra: Record<string, unknown> = {}) => ({
  annotationId,
  type: 'recorder',
  recordingType: 'screen',
  mode: 'floating',
  recordedTime: { duration: 12500, display: '00:12' },
  displayName: 'Jane Doe',
  attachments: [
    {
      attachmentId: 171234,
      url: 'https://cdn.example.com/r/1.webm',
      mimeType: 'video/webm',
      name: '1.webm',
      type: 'video',
      size: 204800,
    },
  ],
  latestVersion: 1,
  ...extra,
});

/** Adds recordings with the given ids to a document, one request per id (so creation order is the given order). */
async function seed(
  headers: Headers,
  organizationId: string,
  documentId: string,
  annotationIds: string[],
): Promise<void> {
  for (const annotationId of annotationIds) {
    const response = await add(headers, { organizationId, documentId, recordings: [{ annotationId }] });
    if (response.statusCode !== 200) throw new Error(`seed failed: ${JSON.stringify(response.body)}`);
  }
}

/** Follows page tokens to the end; returns the pages' ids and the last response. */
async function allPages(
  headers: Headers,
  query: Record<string, unknown>,
): Promise<{ pages: string[][]; last: Invocation }> {
  const pages: string[][] = [];
  let pageToken: string | undefined;
  let response: Invocation;
  do {
    response = await get(headers, { ...query, pageToken });
    expect(response.statusCode).toBe(200);
    pages.push(ids(response));
    pageToken = response.body.result?.pageToken;
  } while (pageToken !== undefined && pages.length < 50);
  return { pages, last: response };
}

describe('recordings', () => {
  let tenant: Tenant;
  let h: Headers;

  beforeAll(async () => {
    tenant = await newTenant();
    h = tenant.apiKeyHeaders;
  });

  describe('add and get', () => {
    it('stores recordings, creates the organization and document, and reads them back with server metadata', async () => {
      const organizationId = uniqueId('org');

      const added = await add(h, {
        organizationId,
        documentId: 'doc',
        recordings: [sample('r1', { metadata: { apiKey: 'forged', documentId: 'x' }, extra: 'dropped' })],
      });
      const byDocument = await get(h, { organizationId, documentId: 'doc' });
      const byOrganization = await get(h, { organizationId });

      expect(added.statusCode).toBe(200);
      expect(added.body.result).toMatchObject({
        status: 'success',
        data: { r1: { success: true, message: 'Recording added.' } },
      });
      const expected = { ...sample('r1'), metadata: { apiKey: tenant.apiKeyId, organizationId, documentId: 'doc' } };
      expect(byDocument.body.result?.data).toEqual([expected]);
      expect(byOrganization.body.result?.data).toEqual([expected]);
      expect(byDocument.body.result).not.toHaveProperty('pageToken');
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(true);
      expect(await getDocument(tenant.apiKeyId, organizationId, 'doc')).toMatchObject({
        documentId: 'doc',
        disabled: false,
      });
    });

    it('generates an annotationId when none is given, defaults type to recorder, and leaves absent fields out', async () => {
      const organizationId = uniqueId('org');

      const added = await add(h, { organizationId, documentId: 'doc', recordings: [{ displayName: 'No id' }] });

      const [generated] = Object.keys(added.body.result?.data);
      expect(generated).toMatch(/^rec_/);
      expect(added.body.result?.data[generated]).toEqual({ success: true, message: 'Recording added.' });
      expect((await get(h, { organizationId })).body.result?.data).toEqual([
        {
          type: 'recorder',
          metadata: { apiKey: tenant.apiKeyId, organizationId, documentId: 'doc' },
          displayName: 'No id',
          annotationId: generated,
        },
      ]);
    });

    it('lists a document’s recordings or the whole organization’s, in creation order and request order', async () => {
      const organizationId = uniqueId('org');
      await add(h, {
        organizationId,
        documentId: 'd1',
        recordings: [{ annotationId: 'z' }, { annotationId: 'a' }, { annotationId: 'm' }],
      });
      await seed(h, organizationId, 'd2', ['b']);
      await seed(h, organizationId, 'd1', ['c']);

      expect(ids(await get(h, { organizationId, documentId: 'd1' }))).toEqual(['z', 'a', 'm', 'c']);
      expect(ids(await get(h, { organizationId, documentId: 'd2' }))).toEqual(['b']);
      expect(ids(await get(h, { organizationId }))).toEqual(['z', 'a', 'm', 'b', 'c']);
      expect(ids(await get(h, { organizationId, documentId: 'never' }))).toEqual([]);
    });

    it('keeps only the named recordings with recordingIds, within the document when one is given', async () => {
      const organizationId = uniqueId('org');
      await seed(h, organizationId, 'd1', ['a', 'b']);
      await seed(h, organizationId, 'd2', ['c']);

      const named = await get(h, { organizationId, recordingIds: ['c', 'missing', 'a'] });
      const inDocument = await get(h, { organizationId, documentId: 'd1', recordingIds: ['c', 'a'] });

      expect(ids(named)).toEqual(['a', 'c']);
      expect(named.body.result?.data[1].metadata.documentId).toBe('d2');
      expect(ids(inDocument)).toEqual(['a']);
    });

    it('replaces a re-added recording in place (idempotent) and refuses one that belongs to another document', async () => {
      const organizationId = uniqueId('org');
      await add(h, { organizationId, documentId: 'd', recordings: [sample('first'), sample('second')] });
      await seed(h, organizationId, 'd', ['third']);

      const again = await add(h, {
        organizationId,
        documentId: 'd',
        recordings: [{ annotationId: 'first', displayName: 'Edited', latestVersion: 2 }],
      });
      const repeat = await add(h, {
        organizationId,
        documentId: 'd',
        recordings: [{ annotationId: 'first', displayName: 'Edited', latestVersion: 2 }],
      });
      const elsewhere = await add(h, {
        organizationId,
        documentId: 'other',
        recordings: [{ annotationId: 'second', displayName: 'Moved?' }, { annotationId: 'fresh' }],
      });

      expect(again.body.result?.data).toEqual({ first: { success: true, message: 'Recording updated.' } });
      expect(repeat.body.result?.data).toEqual(again.body.result?.data);
      expect(elsewhere.body.result?.status).toBe('success');
      expect(elsewhere.body.result?.data).toEqual({
        second: { success: false, message: 'Recording belongs to another document.' },
        fresh: { success: true, message: 'Recording added.' },
      });
      const listed = await get(h, { organizationId, documentId: 'd' });
      expect(ids(listed)).toEqual(['first', 'second', 'third']);
      expect(listed.body.result?.data[0]).toEqual({
        type: 'recorder',
        metadata: { apiKey: tenant.apiKeyId, organizationId, documentId: 'd' },
        displayName: 'Edited',
        annotationId: 'first',
        latestVersion: 2,
      });
      expect(listed.body.result?.data[1]).toEqual({
        ...sample('second'),
        metadata: { apiKey: tenant.apiKeyId, organizationId, documentId: 'd' },
      });
      expect(ids(await get(h, { organizationId, documentId: 'other' }))).toEqual(['fresh']);
    });

    it('round-trips numbers at the edges of the accepted range', async () => {
      const organizationId = uniqueId('org');
      const edges = {
        recordedTime: { duration: 1e-100 },
        latestVersion: -Number.MAX_SAFE_INTEGER,
        attachments: [{ attachmentId: 0.5, url: 'http://x.example/a', size: Number.MAX_SAFE_INTEGER }],
      };

      const added = await add(h, { organizationId, documentId: 'd', recordings: [{ annotationId: 'n', ...edges }] });

      expect(added.body.result?.data.n.success).toBe(true);
      expect((await get(h, { organizationId })).body.result?.data[0]).toMatchObject(edges);
    });
  });

  describe('pages', () => {
    it('pages by organization, document and recordingIds with full pages and no token on the last', async () => {
      const organizationId = uniqueId('org');
      await add(h, {
        organizationId,
        documentId: 'd',
        recordings: ['r0', 'r1', 'r2', 'r3', 'r4'].map((annotationId) => ({ annotationId })),
      });

      const organization = await allPages(h, { organizationId, pageSize: 2 });
      const document = await allPages(h, { organizationId, documentId: 'd', pageSize: 2 });
      const named = await allPages(h, { organizationId, recordingIds: ['r4', 'r0', 'r2'], pageSize: 2 });
      const exact = await allPages(h, { organizationId, pageSize: 5 });

      expect(organization.pages).toEqual([['r0', 'r1'], ['r2', 'r3'], ['r4']]);
      expect(document.pages).toEqual(organization.pages);
      expect(named.pages).toEqual([['r0', 'r2'], ['r4']]);
      expect(exact.pages).toEqual([['r0', 'r1', 'r2', 'r3', 'r4']]);
      for (const { last } of [organization, document, named, exact])
        expect(last.body.result).not.toHaveProperty('pageToken');
    });

    it('defaults to pages of 100', async () => {
      const organizationId = uniqueId('org');
      const recordings = Array.from({ length: 100 }, (_, i) => ({ annotationId: `r${String(i).padStart(3, '0')}` }));
      await add(h, { organizationId, documentId: 'd', recordings });
      await seed(h, organizationId, 'd', ['last']);

      const first = await get(h, { organizationId });
      const second = await get(h, { organizationId, pageToken: first.body.result?.pageToken });

      expect(ids(first)).toHaveLength(100);
      expect(ids(second)).toEqual(['last']);
      expect(second.body.result).not.toHaveProperty('pageToken');
    });

    it('ends a page early, with a token, before its response would pass 5 MB', async () => {
      const organizationId = uniqueId('org');
      const big = (annotationId: string) => ({
        annotationId,
        displayName: 'x'.repeat(1000),
        attachments: Array.from({ length: 100 }, (_, i) => ({
          attachmentId: i,
          url: `https://cdn.example.com/${'p'.repeat(2000)}`,
          name: 'n'.repeat(400),
        })),
      });
      for (let i = 0; i < 24; i += 3) {
        const response = await add(h, {
          organizationId,
          documentId: 'd',
          recordings: [0, 1, 2].map((j) => big(`b${String(i + j).padStart(2, '0')}`)),
        });
        expect(response.statusCode).toBe(200);
      }

      const { pages } = await allPages(h, { organizationId, pageSize: 1000 });

      expect(pages.length).toBe(2);
      expect(pages.flat()).toEqual(Array.from({ length: 24 }, (_, i) => `b${String(i).padStart(2, '0')}`));
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
      const organizationId = uniqueId('org');
      await seed(h, organizationId, 'd', ['a', 'b']);
      const token = (await get(h, { organizationId, pageSize: 1 })).body.result?.pageToken as string;

      expectInvalid(await get(h, { organizationId, pageSize: 1, pageToken: mangle(token) }));
    });

    it('rejects a page token used for another query', async () => {
      const organizationId = uniqueId('org');
      await seed(h, organizationId, 'd', ['a', 'b']);
      await seed(h, organizationId, 'e', ['c', 'd']);
      const token = (await get(h, { organizationId, documentId: 'd', pageSize: 1 })).body.result?.pageToken as string;

      const otherDocument = await get(h, { organizationId, documentId: 'e', pageSize: 1, pageToken: token });
      const wholeOrganization = await get(h, { organizationId, pageSize: 1, pageToken: token });
      const named = await get(h, {
        organizationId,
        documentId: 'd',
        recordingIds: ['a', 'b'],
        pageSize: 1,
        pageToken: token,
      });

      for (const response of [otherDocument, wholeOrganization, named]) expectInvalid(response);
      expect(otherDocument.body.error?.message).toBe('Page token does not belong to this query.');
    });
  });

  describe('bad input', () => {
    const url = 'https://cdn.example.com/a.webm';
    it.each([
      ['a missing organizationId', { organizationId: undefined }],
      ['a missing documentId', { documentId: undefined }],
      ['missing recordings', { recordings: undefined }],
      ['no recordings', { recordings: [] }],
      ['recordings that are not an array', { recordings: { annotationId: 'bad' } }],
      [
        '101 recordings',
        { recordings: Array.from({ length: 101 }, (_, i) => ({ annotationId: i === 0 ? 'bad' : `r${i}` })) },
      ],
      ['a repeated annotationId', { recordings: [{ annotationId: 'bad' }, { annotationId: 'bad' }] }],
      ['a numeric displayName', { recordings: [{ annotationId: 'bad', displayName: 5 }] }],
      ['a string duration', { recordings: [{ annotationId: 'bad', recordedTime: { duration: '12' } }] }],
      ['a negative duration', { recordings: [{ annotationId: 'bad', recordedTime: { duration: -1 } }] }],
      ['a string latestVersion', { recordings: [{ annotationId: 'bad', latestVersion: '2' }] }],
      ['a number beyond 2^53', { recordings: [{ annotationId: 'bad', latestVersion: 2 ** 53 }] }],
      [
        'a number below 1e-100',
        { recordings: [{ annotationId: 'bad', attachments: [{ url, attachmentId: 1e-101 }] }] },
      ],
      ['attachments that are not an array', { recordings: [{ annotationId: 'bad', attachments: { url } }] }],
      [
        '101 attachments',
        {
          recordings: [
            { annotationId: 'bad', attachments: Array.from({ length: 101 }, (_, i) => ({ attachmentId: i, url })) },
          ],
        },
      ],
      [
        'a repeated attachmentId',
        {
          recordings: [
            {
              annotationId: 'bad',
              attachments: [
                { attachmentId: 1, url },
                { attachmentId: 1, url },
              ],
            },
          ],
        },
      ],
      ['an attachment without url', { recordings: [{ annotationId: 'bad', attachments: [{ attachmentId: 1 }] }] }],
      ['an ftp url', { recordings: [{ annotationId: 'bad', attachments: [{ url: 'ftp://example.com/a' }] }] }],
      ['a url that is not a URL', { recordings: [{ annotationId: 'bad', attachments: [{ url: 'not a url' }] }] }],
      ['a string attachment size', { recordings: [{ annotationId: 'bad', attachments: [{ url, size: '1 KB' }] }] }],
      ['an empty annotationId', { recordings: [{ annotationId: '' }, { annotationId: 'bad' }] }],
      [
        'an annotationId of 257 characters',
        { recordings: [{ annotationId: 'x'.repeat(257) }, { annotationId: 'bad' }] },
      ],
      [
        'a recording over 256 KB',
        {
          recordings: [
            {
              annotationId: 'bad',
              displayName: 'x'.repeat(1000),
              attachments: Array.from({ length: 100 }, () => ({
                url: `${url}?${'q'.repeat(2000)}`,
                name: 'n'.repeat(1000),
              })),
            },
          ],
        },
      ],
    ])('refuses %s with INVALID_ARGUMENT and writes nothing', async (_, override) => {
      const organizationId = uniqueId('org');

      const response = await add(h, {
        organizationId,
        documentId: 'd',
        recordings: [{ annotationId: 'bad' }],
        ...override,
      });

      expectInvalid(response);
      expect(response.body.error?.details.issues.length).toBeGreaterThan(0);
      expect(await getRecordings(tenant.apiKeyId, organizationId, ['bad'])).toEqual([]);
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
    });

    it.each([
      ['a missing organizationId', {}],
      ['a numeric organizationId', { organizationId: 5 }],
      ['pageSize 0', { organizationId: 'o', pageSize: 0 }],
      ['pageSize 1001', { organizationId: 'o', pageSize: 1001 }],
      ['a fractional pageSize', { organizationId: 'o', pageSize: 1.5 }],
      ['101 recordingIds', { organizationId: 'o', recordingIds: Array.from({ length: 101 }, (_, i) => `r${i}`) }],
      ['repeated recordingIds', { organizationId: 'o', recordingIds: ['a', 'a'] }],
      ['empty recordingIds', { organizationId: 'o', recordingIds: [] }],
      ['recordingIds that are not strings', { organizationId: 'o', recordingIds: [1] }],
      ['a numeric pageToken', { organizationId: 'o', pageToken: 5 }],
    ])('get refuses %s with INVALID_ARGUMENT', async (_, data) => {
      expectInvalid(await get(h, data));
    });
  });

  it('keeps ids with separators, unicode and 256 characters apart', async () => {
    const organizationId = `${uniqueId('org')}#DOC#x`;
    const tricky = [
      'a#b',
      'a',
      'b',
      'a%23b',
      '%',
      '~a',
      'REC#a',
      'a|b',
      'ünï©ødé 文档 😀',
      'x'.repeat(256),
      `${'x'.repeat(255)}y`,
      '𝄞'.repeat(256),
    ];
    await add(h, {
      organizationId,
      documentId: 'a#b',
      recordings: tricky.map((annotationId) => ({ annotationId, displayName: `in a#b: ${annotationId.slice(0, 8)}` })),
    });
    await add(h, { organizationId, documentId: 'a', recordings: [{ annotationId: 'only-in-a' }] });
    await add(h, {
      organizationId: `${organizationId}#RECS`,
      documentId: 'a#b',
      recordings: [{ annotationId: 'a#b' }],
    });

    expect(ids(await get(h, { organizationId, documentId: 'a#b' }))).toEqual(tricky);
    expect(ids(await get(h, { organizationId, documentId: 'a' }))).toEqual(['only-in-a']);
    expect(ids(await get(h, { organizationId, documentId: 'a%23b' }))).toEqual([]);
    expect(ids(await get(h, { organizationId }))).toEqual([...tricky, 'only-in-a']);
    expect(ids(await get(h, { organizationId, recordingIds: ['a#b', 'a%23b', 'x'.repeat(256)] }))).toEqual([
      'a#b',
      'a%23b',
      'x'.repeat(256),
    ]);
    expect(ids(await get(h, { organizationId: `${organizationId}#RECS` }))).toEqual(['a#b']);
  });

  describe('tenancy', () => {
    const outsiders: Array<[string, () => Promise<Headers>]> = [
      ['another key of the same workspace', () => siblingKey(tenant)],
      ['a key of another workspace', async () => (await newTenant()).apiKeyHeaders],
    ];

    it.each(outsiders)('%s can neither read nor overwrite the recordings', async (_, headersOf) => {
      const organizationId = uniqueId('org');
      await add(h, { organizationId, documentId: 'd', recordings: [sample('mine')] });
      const headers = await headersOf();

      const reads = await Promise.all([
        get(headers, { organizationId }),
        get(headers, { organizationId, documentId: 'd' }),
        get(headers, { organizationId, recordingIds: ['mine'] }),
      ]);
      const written = await add(headers, {
        organizationId,
        documentId: 'd',
        recordings: [{ annotationId: 'mine', displayName: 'Theirs' }],
      });
      const theirs = await get(headers, { organizationId });

      for (const reply of reads) expect(reply.body.result?.data).toEqual([]);
      expect(written.body.result?.data).toEqual({ mine: { success: true, message: 'Recording added.' } });
      expect(theirs.body.result?.data).toEqual([
        {
          type: 'recorder',
          metadata: { apiKey: headers['x-service-api-key'], organizationId, documentId: 'd' },
          displayName: 'Theirs',
          annotationId: 'mine',
        },
      ]);
      expect((await get(h, { organizationId })).body.result?.data).toEqual([
        { ...sample('mine'), metadata: { apiKey: tenant.apiKeyId, organizationId, documentId: 'd' } },
      ]);
    });

    it.each(outsiders)('%s cannot use the tenant’s page token', async (_, headersOf) => {
      const organizationId = uniqueId('org');
      await seed(h, organizationId, 'd', ['a', 'b']);
      const token = (await get(h, { organizationId, pageSize: 1 })).body.result?.pageToken;

      expectInvalid(await get(await headersOf(), { organizationId, pageSize: 1, pageToken: token }));
    });
  });
});
