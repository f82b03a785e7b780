/**
 * Comment annotations (decisions §16) through the real middleware: the ten operations' shapes, paging and filters
 * by key, bad input (nothing written), tenancy, and the cost of a page. Anchors: comment-anchors.test.ts.
 */
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { recordCommands } from '../../local/grant-check';
import { TABLE_NAME, db, dynamodb } from '../../shared/db/client';
import { MAX_BATCHED_COMMENTS, documentThreadsQuery, readThread } from '../../shared/db/comment-annotation';
import { queryAll } from '../../shared/db/query';
import { organizationExists } from '../../shared/db/organization';
import { CapacityMeter } from '../support/capacity-meter';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { routeCaller, type Invocation } from '../support/invoke';
import { uniqueId } from '../support/ids';

type Json = Record<string, unknown>;

let tenant: Tenant;
const call = routeCaller(() => tenant.apiKeyHeaders);

const ADD = '/v2/commentannotations/add';
const GET = '/v2/commentannotations/get';
const UPDATE = '/v2/commentannotations/update';
const DELETE = '/v2/commentannotations/delete';
const COUNT = '/v2/commentannotations/count';
const READ = '/v2/commentannotations/read';
const COMMENTS_ADD = '/v2/commentannotations/comments/add';
const COMMENTS_GET = '/v2/commentannotations/comments/get';
const COMMENTS_UPDATE = '/v2/commentannotations/comments/update';
const COMMENTS_DELETE = '/v2/commentannotations/comments/delete';

const ok = (response: Invocation) => {
  if (response.statusCode !== 200) throw new Error(`${response.statusCode}: ${JSON.stringify(response.body)}`);
  return response.body.result as { data: unknown; message: string; nextPageToken?: string };
};
const errorOf = (response: Invocation) => ({ statusCode: response.statusCode, status: response.body.error?.status });
const ids = (response: Invocation) => (ok(response).data as Json[]).map((thread) => thread.annotationId);

const comment = (userId: string, text: string, extra: Json = {}) => ({ commentText: text, from: { userId }, ...extra });
const thread = (annotationId: string, extra: Json = {}) => ({
  annotationId,
  commentData: [comment('ann', `first of ${annotationId}`)],
  ...extra,
});

/** A new organization and document holding the given threads, added one request each (so each is newer). */
async function seed(annotations: Json[], documentId = 'doc', organizationId = uniqueId('org')) {
  for (const annotation of annotations) {
    ok(
      await call(ADD, {
        organizationId,
        documentId,
        createOrganization: true,
        createDocument: true,
        commentAnnotations: [annotation],
      }),
    );
    // Distinct lastUpdated per thread: the order the tests expect is the order of writing.
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return { organizationId, documentId };
}

/** `levels` objects, each inside the one before. */
const nest = (levels: number): Json => (levels === 0 ? { end: true } : { a: nest(levels - 1) });

/** Follows the tokens to the end: the ids of each page. */
async function pages(query: Json, max = 50): Promise<unknown[][]> {
  const all: unknown[][] = [];
  let pageToken: string | undefined;
  do {
    const result = ok(await call(GET, { ...query, ...(pageToken === undefined ? {} : { pageToken }) }));
    all.push((result.data as Json[]).map((t) => t.annotationId));
    pageToken = result.nextPageToken;
  } while (pageToken !== undefined && all.length < max);
  return all;
}

beforeAll(async () => {
  tenant = await newTenant();
});

describe('add and get', () => {
  it('adds a thread with its first comments and answers it in the §16 shape, HTML sanitized, ids generated', async () => {
    const organizationId = uniqueId('org');
    const added = ok(
      await call(ADD, {
        organizationId,
        documentId: 'doc',
        createOrganization: true,
        createDocument: true,
        commentAnnotations: [
          {
            priority: { id: 'P1', name: 'High' },
            assignedTo: { userId: 'ben', name: 'Ben' },
            context: { section: 'intro' },
            location: { id: 'loc-1', locationName: 'Intro' },
            commentData: [
              {
                commentHtml:
                  '<p onclick="steal()">Hi <a href="javascript:alert(1)">x</a><script>alert(1)</script><style>p{}</style><b>there</b></p>',
                from: { userId: 'ann', name: 'Ann', email: 'ann@example.com' },
                taggedUserContacts: [{ userId: 'ben', contact: { name: 'Ben' } }],
              },
              comment('ben', 'Reply'),
            ],
          },
        ],
      }),
    );
    const [annotationId] = Object.keys(added.data as Json);
    expect(annotationId).toMatch(/^ca_/);
    expect(added).toMatchObject({
      message: 'Comment Annotation(s) added successfully.',
      data: {
        [annotationId]: { success: true, annotationId, commentIds: [1, 2], message: 'Comment annotation added.' },
      },
    });

    const [got] = ok(await call(GET, { organizationId, documentId: 'doc' })).data as Json[];
    expect(got).toEqual({
      annotationId,
      documentId: 'doc',
      createdAt: expect.any(Number),
      lastUpdated: expect.any(Number),
      from: { userId: 'ann', name: 'Ann', email: 'ann@example.com' },
      comments: [
        {
          commentId: 1,
          commentHtml: '<p>Hi <a>x</a><b>there</b></p>',
          from: { userId: 'ann', name: 'Ann', email: 'ann@example.com' },
          taggedUserContacts: [{ userId: 'ben', contact: { name: 'Ben' } }],
          createdAt: got.createdAt,
          lastUpdated: got.createdAt,
          edited: false,
        },
        {
          commentId: 2,
          commentText: 'Reply',
          from: { userId: 'ben' },
          taggedUserContacts: [],
          createdAt: got.createdAt,
          lastUpdated: got.createdAt,
          edited: false,
        },
      ],
      status: { id: 'OPEN', name: 'Open', type: 'default' },
      priority: { id: 'P1', name: 'High' },
      assignedTo: { userId: 'ben', name: 'Ben' },
      context: { section: 'intro' },
      location: { id: 'loc-1', locationName: 'Intro' },
      visibility: { type: 'public' },
      commentCount: 2,
      resolved: false,
    });
  });

  it('keeps any JSON in context and contact exactly: numbers DynamoDB cannot hold, odd keys', async () => {
    const odd = { huge: 1e300, tiny: 1e-200, beyond: 2 ** 60, constructor: 'c', deep: nest(20) };
    const { organizationId } = await seed([
      thread('t', {
        context: odd,
        commentData: [comment('ann', 'x', { context: odd, taggedUserContacts: [{ userId: 'ben', contact: odd }] })],
      }),
    ]);

    const [got] = ok(await call(GET, { organizationId, documentId: 'doc' })).data as Json[];

    expect(got.context).toEqual(odd);
    const [first] = got.comments as Json[];
    expect(first.context).toEqual(odd);
    expect(first.taggedUserContacts).toEqual([{ userId: 'ben', contact: odd }]);
  });

  it('keeps caller ids, fails an item whose annotationId exists, and keys the batch by annotationId', async () => {
    const { organizationId } = await seed([thread('t1')]);
    const result = ok(
      await call(ADD, {
        organizationId,
        documentId: 'doc',
        commentAnnotations: [
          thread('t1'),
          { annotationId: 't2', commentData: [comment('ann', 'x', { commentId: 42 })] },
        ],
      }),
    );
    expect(result.data).toEqual({
      t1: { success: false, message: 'Comment annotation already exists.' },
      t2: { success: true, annotationId: 't2', commentIds: [42], message: 'Comment annotation added.' },
    });
  });

  it('is NOT_FOUND for an unknown organization or document without the create flags, writing nothing', async () => {
    const organizationId = uniqueId('org');
    expect(errorOf(await call(ADD, { organizationId, documentId: 'doc', commentAnnotations: [thread('t')] }))).toEqual({
      statusCode: 404,
      status: 'NOT_FOUND',
    });
    expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
    const known = await seed([thread('a')]);
    expect(
      errorOf(
        await call(ADD, {
          organizationId: known.organizationId,
          documentId: 'other',
          commentAnnotations: [thread('t')],
        }),
      ),
    ).toEqual({ statusCode: 404, status: 'NOT_FOUND' });
    expect(await readThread(tenant.apiKeyId, known.organizationId, 't')).toBeUndefined();
  });

  it('with verifyUserPermissions fails the items whose author has no access to the document', async () => {
    const { organizationId } = await seed([thread('seed')]);
    ok(await call('/v2/users/add', { organizationId, users: [{ userId: 'member' }] }));
    const result = ok(
      await call(ADD, {
        organizationId,
        documentId: 'doc',
        verifyUserPermissions: true,
        commentAnnotations: [
          { annotationId: 'ok', commentData: [comment('member', 'hi')] },
          { annotationId: 'no', commentData: [comment('stranger', 'hi')] },
        ],
      }),
    );
    expect(result.data).toMatchObject({
      ok: { success: true },
      no: { success: false, message: expect.stringContaining('PERMISSION_DENIED') },
    });
    expect(await readThread(tenant.apiKeyId, organizationId, 'no')).toBeUndefined();
  });

  describe('bad input is INVALID_ARGUMENT and writes nothing', () => {
    const long = (n: number) => 'x'.repeat(n);
    const cases: Array<[string, Json]> = [
      ['no threads', { commentAnnotations: [] }],
      ['51 threads', { commentAnnotations: Array.from({ length: 51 }, (_, i) => thread(`t${i}`)) }],
      ['an annotationId of 129 characters', { commentAnnotations: [thread(long(129))] }],
      ['a repeated annotationId', { commentAnnotations: [thread('same'), thread('same')] }],
      ['a thread without comments', { commentAnnotations: [{ annotationId: 't', commentData: [] }] }],
      ['51 comments', { commentAnnotations: [{ commentData: Array.from({ length: 51 }, () => comment('a', 'x')) }] }],
      ['text of 20,001 characters', { commentAnnotations: [{ commentData: [comment('a', long(20_001))] }] }],
      [
        'HTML of 20,001 characters',
        { commentAnnotations: [{ commentData: [{ from: { userId: 'a' }, commentHtml: long(20_001) }] }] },
      ],
      ['a comment with neither text nor HTML', { commentAnnotations: [{ commentData: [{ from: { userId: 'a' } }] }] }],
      ['a comment without author', { commentAnnotations: [{ commentData: [{ commentText: 'x' }] }] }],
      ['a fractional commentId', { commentAnnotations: [{ commentData: [comment('a', 'x', { commentId: 1.5 })] }] }],
      ['a string commentId', { commentAnnotations: [{ commentData: [comment('a', 'x', { commentId: '1' })] }] }],
      [
        'context of 51 keys',
        {
          commentAnnotations: [
            thread('t', { context: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }),
          ],
        },
      ],
      [
        'an unknown status type',
        { commentAnnotations: [thread('t', { status: { id: 'X', name: 'X', type: 'closed' } })] },
      ],
      ['an anchor without positions', { commentAnnotations: [thread('t', { anchor: { editorId: 'e' } })] }],
      ['commentAnnotations not a list', { commentAnnotations: 'x' }],
    ];
    it.each(cases)('%s', async (_, data) => {
      const organizationId = uniqueId('org');
      const response = await call(ADD, {
        organizationId,
        documentId: 'doc',
        createOrganization: true,
        createDocument: true,
        ...data,
      });
      expect(errorOf(response)).toEqual({ statusCode: 400, status: 'INVALID_ARGUMENT' });
      expect(await organizationExists(tenant.apiKeyId, organizationId)).toBe(false);
    });

    const getCases: Array<[string, Json]> = [
      ['pageSize 0', { pageSize: 0 }],
      ['pageSize 1,001', { pageSize: 1001 }],
      ['31 documentIds', { documentIds: Array.from({ length: 31 }, (_, i) => `d${i}`) }],
      ['31 annotationIds', { annotationIds: Array.from({ length: 31 }, (_, i) => `a${i}`) }],
      ['a foreign page token', { pageToken: 'abc.def' }],
      ['neither documents nor annotationIds', { documentId: undefined }],
    ];
    it.each(getCases)('get: %s', async (_, data) => {
      const { organizationId } = await seed([thread('t')]);
      expect(errorOf(await call(GET, { organizationId, documentId: 'doc', ...data }))).toEqual({
        statusCode: 400,
        status: 'INVALID_ARGUMENT',
      });
    });
  });
});

describe('get: paging and filters, newest lastUpdated first, by key', () => {
  it('pages a document newest first, and a change moves a thread to the front', async () => {
    const { organizationId } = await seed(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id) => thread(id)));
    expect(await pages({ organizationId, documentId: 'doc', pageSize: 3 })).toEqual([
      ['g', 'f', 'e'],
      ['d', 'c', 'b'],
      ['a'],
    ]);
    ok(
      await call(COMMENTS_ADD, {
        organizationId,
        documentId: 'doc',
        annotationId: 'b',
        commentData: [comment('ben', 'up')],
      }),
    );
    expect(await pages({ organizationId, documentId: 'doc', pageSize: 4 })).toEqual([
      ['b', 'g', 'f', 'e'],
      ['d', 'c', 'a'],
    ]);
  });

  it('merges up to 30 documents by lastUpdated, each thread once, across pages', async () => {
    const organizationId = uniqueId('org');
    const order: string[] = [];
    for (let i = 0; i < 9; i += 1) {
      const documentId = `d${i % 3}`;
      await seed([thread(`t${i}`)], documentId, organizationId);
      order.unshift(`t${i}`);
    }
    const all = await pages({ organizationId, documentIds: ['d0', 'd1', 'd2'], pageSize: 2 });
    expect(all.flat()).toEqual(order);
    expect(all.slice(0, -1).every((page) => page.length === 2)).toBe(true);
  });

  it('filters by author, mentioned user, status, location, and times', async () => {
    const organizationId = uniqueId('org');
    await seed([thread('by-ann')], 'doc', organizationId);
    await seed(
      [{ annotationId: 'by-ben', commentData: [comment('ben', 'x', { taggedUserContacts: [{ userId: 'carl' }] })] }],
      'doc',
      organizationId,
    );
    const middle = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await seed(
      [thread('done', { status: { id: 'DONE', name: 'Done', type: 'terminal' }, location: { id: 'L' } })],
      'doc',
      organizationId,
    );
    await seed(
      [
        {
          annotationId: 'mentions-two',
          commentData: [comment('dee', 'x', { taggedUserContacts: [{ userId: 'carl' }, { userId: 'ann' }] })],
        },
      ],
      'doc',
      organizationId,
    );
    const scope = { organizationId, documentId: 'doc' };

    expect(ids(await call(GET, { ...scope, userIds: ['ben', 'dee'] }))).toEqual(['mentions-two', 'by-ben']);
    expect(ids(await call(GET, { ...scope, mentionedUserIds: ['carl', 'ann'] }))).toEqual(['mentions-two', 'by-ben']);
    expect(ids(await call(GET, { ...scope, statusIds: ['DONE'] }))).toEqual(['done']);
    expect(ids(await call(GET, { ...scope, statusIds: ['OPEN'], userIds: ['ann'] }))).toEqual(['by-ann']);
    expect(ids(await call(GET, { ...scope, locationIds: ['L'] }))).toEqual(['done']);
    expect(ids(await call(GET, { ...scope, createdAfter: middle }))).toEqual(['mentions-two', 'done']);
    expect(ids(await call(GET, { ...scope, createdBefore: middle }))).toEqual(['by-ben', 'by-ann']);
    expect(ids(await call(GET, { ...scope, updatedBefore: middle }))).toEqual(['by-ben', 'by-ann']);
    expect(ids(await call(GET, { ...scope, updatedAfter: middle }))).toEqual(['mentions-two', 'done']);
    expect(ids(await call(GET, { ...scope, updatedAfter: middle, updatedBefore: middle - 10 }))).toEqual([]);
    expect(ids(await call(GET, { ...scope, createdAfter: middle, updatedBefore: middle }))).toEqual([]);
    expect(ids(await call(GET, { organizationId, annotationIds: ['by-ann', 'done', 'unknown'] }))).toEqual([
      'done',
      'by-ann',
    ]);
    // A mentioned-user page of 1 with two users mentioned in one thread shows that thread once.
    expect((await pages({ ...scope, mentionedUserIds: ['carl', 'ann'], pageSize: 1 })).flat()).toEqual([
      'mentions-two',
      'by-ben',
    ]);
  });

  it('with viewerUserId shows what that user may see: document access, and restricted threads naming them', async () => {
    const { organizationId } = await seed([
      thread('public'),
      thread('for-ben', { visibility: { type: 'restricted', userIds: ['ben'] } }),
      thread('for-carl', { visibility: { type: 'restricted', userIds: ['carl'] } }),
    ]);
    ok(await call('/v2/users/add', { organizationId, users: [{ userId: 'ben' }] }));
    expect(ids(await call(GET, { organizationId, documentId: 'doc', viewerUserId: 'ben' }))).toEqual([
      'for-ben',
      'public',
    ]);
    expect(ids(await call(GET, { organizationId, documentId: 'doc', viewerUserId: 'outsider' }))).toEqual([]);
  });

  it('is NOT_FOUND for an unknown document', async () => {
    const { organizationId } = await seed([thread('t')]);
    expect(errorOf(await call(GET, { organizationId, documentIds: ['doc', 'nope'] }))).toEqual({
      statusCode: 404,
      status: 'NOT_FOUND',
    });
  });
});

describe('update, delete', () => {
  it('updates the named threads of the document; others are not found', async () => {
    const { organizationId } = await seed([thread('a'), thread('b')]);
    await seed([thread('elsewhere')], 'other', organizationId);
    const result = ok(
      await call(UPDATE, {
        organizationId,
        documentId: 'doc',
        annotationIds: ['a', 'elsewhere', 'nope'],
        updatedData: { status: { id: 'RESOLVED', name: 'Resolved', type: 'terminal' }, assignedTo: { userId: 'ben' } },
      }),
    );
    expect(result.data).toEqual({
      a: { success: true, message: 'Comment annotation updated.' },
      elsewhere: { success: false, message: 'Comment annotation not found.' },
      nope: { success: false, message: 'Comment annotation not found.' },
    });
    const [first] = ok(await call(GET, { organizationId, documentId: 'doc' })).data as Json[];
    expect(first).toMatchObject({
      annotationId: 'a',
      status: { id: 'RESOLVED' },
      resolved: true,
      assignedTo: { userId: 'ben' },
    });
    expect(ids(await call(GET, { organizationId, documentId: 'doc', statusIds: ['OPEN'] }))).toEqual(['b']);
    expect(
      errorOf(await call(UPDATE, { organizationId, documentId: 'doc', annotationIds: ['a'], updatedData: {} })),
    ).toEqual({
      statusCode: 400,
      status: 'INVALID_ARGUMENT',
    });
  });

  it('deletes threads with their comments', async () => {
    const { organizationId } = await seed([thread('a'), thread('b')]);
    const result = ok(await call(DELETE, { organizationId, documentId: 'doc', annotationIds: ['a', 'nope'] }));
    expect(result.data).toEqual({
      a: { success: true, message: 'Comment annotation deleted.' },
      nope: { success: false, message: 'Comment annotation not found.' },
    });
    expect(
      await readThread(tenant.apiKeyId, organizationId, 'a', { consistent: true, withReaders: true }),
    ).toBeUndefined();
    expect(ids(await call(GET, { organizationId, documentId: 'doc' }))).toEqual(['b']);
    ok(await call(COUNT, { organizationId, documentIds: ['doc'] }));
  });
});

describe('count and read', () => {
  it('counts threads per document and those unread by a user: newer comments by others since their last read', async () => {
    const { organizationId } = await seed([thread('a'), thread('b')]);
    await seed([thread('c')], 'empty-ish', organizationId);
    const count = async (userId?: string) =>
      ok(
        await call(COUNT, {
          organizationId,
          documentIds: ['doc', 'empty-ish'],
          ...(userId === undefined ? {} : { userId }),
        }),
      ).data;

    expect(await count()).toEqual({ doc: { total: 2 }, 'empty-ish': { total: 1 } });
    expect(await count('ben')).toEqual({ doc: { total: 2, unread: 2 }, 'empty-ish': { total: 1, unread: 1 } });
    expect(await count('ann')).toEqual({ doc: { total: 2, unread: 0 }, 'empty-ish': { total: 1, unread: 0 } });

    const read = ok(
      await call(READ, { organizationId, documentId: 'doc', annotationIds: ['a', 'nope'], userId: 'ben' }),
    );
    expect(read.data).toEqual({
      a: { success: true, message: 'Comment annotation marked as read.' },
      nope: { success: false, message: 'Comment annotation not found.' },
    });
    expect(await count('ben')).toMatchObject({ doc: { total: 2, unread: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 2));
    ok(
      await call(COMMENTS_ADD, {
        organizationId,
        documentId: 'doc',
        annotationId: 'a',
        commentData: [comment('ann', 'more')],
      }),
    );
    expect(await count('ben')).toMatchObject({ doc: { total: 2, unread: 2 } });
    // ben's own reply reads the thread for him.
    ok(
      await call(COMMENTS_ADD, {
        organizationId,
        documentId: 'doc',
        annotationId: 'a',
        commentData: [comment('ben', 'ok')],
      }),
    );
    expect(await count('ben')).toMatchObject({ doc: { total: 2, unread: 1 } });
    expect(errorOf(await call(COUNT, { organizationId, documentIds: ['nope'] }))).toEqual({
      statusCode: 404,
      status: 'NOT_FOUND',
    });
    // Documents with threads are known by them; one without any is looked up: unknown, it fails the request.
    const mixed = await call(COUNT, { organizationId, documentIds: ['doc', 'nope'] });
    expect(errorOf(mixed)).toEqual({ statusCode: 404, status: 'NOT_FOUND' });
    expect(mixed.body.error?.message).toBe('Document not found: nope.');
    ok(
      await call('/v2/organizations/documents/add', {
        organizationId,
        documents: [{ documentId: 'no-threads', documentName: 'Quiet' }],
      }),
    );
    expect(ok(await call(COUNT, { organizationId, documentIds: ['doc', 'no-threads'] })).data).toEqual({
      doc: { total: 2 },
      'no-threads': { total: 0 },
    });
    expect(errorOf(await call(COUNT, { organizationId, documentIds: [] }))).toEqual({
      statusCode: 400,
      status: 'INVALID_ARGUMENT',
    });
  });
});

describe('comments', () => {
  it('adds (ids continue past the highest), gets oldest first, updates (edited, sanitized) and deletes', async () => {
    const { organizationId } = await seed([
      { annotationId: 't', commentData: [comment('ann', 'one', { commentId: 10 })] },
    ]);
    const scope = { organizationId, documentId: 'doc', annotationId: 't' };
    const added = ok(
      await call(COMMENTS_ADD, {
        ...scope,
        commentData: [comment('ben', 'two'), comment('ann', 'three', { commentId: 5 })],
      }),
    );
    expect(added).toEqual({ status: 'success', message: 'Comment(s) added successfully.', data: [11, 5] });

    const all = ok(await call(COMMENTS_GET, scope)).data as Json[];
    expect(all.map((c) => c.commentId)).toEqual([10, 11, 5]);
    expect(ok(await call(COMMENTS_GET, { ...scope, commentIds: [5] })).data).toEqual([
      expect.objectContaining({ commentId: 5 }),
    ]);

    const updated = ok(
      await call(COMMENTS_UPDATE, {
        ...scope,
        commentIds: [11, 99],
        updatedData: { commentHtml: '<img src=x onerror=alert(1)><i>two</i>' },
      }),
    );
    expect(updated.data).toEqual({
      11: { success: true, message: 'Comment updated.' },
      99: { success: false, message: 'Comment not found.' },
    });
    const [edited] = ok(await call(COMMENTS_GET, { ...scope, commentIds: [11] })).data as Json[];
    expect(edited).toMatchObject({ commentText: 'two', commentHtml: '<img src="x" /><i>two</i>', edited: true });

    const clash = await call(COMMENTS_ADD, { ...scope, commentData: [comment('ann', 'again', { commentId: 10 })] });
    expect(errorOf(clash)).toEqual({ statusCode: 409, status: 'ALREADY_EXISTS' });
    expect((ok(await call(COMMENTS_GET, scope)).data as Json[]).length).toBe(3);

    const deleted = ok(await call(COMMENTS_DELETE, { ...scope, commentIds: [10, 99] }));
    expect(deleted.data).toEqual({
      10: { success: true, message: 'Comment deleted.' },
      99: { success: false, message: 'Comment not found.' },
    });
    const [threadNow] = ok(await call(GET, { organizationId, annotationIds: ['t'] })).data as Json[];
    expect(threadNow.commentCount).toBe(2);

    ok(await call(COMMENTS_DELETE, { ...scope, commentIds: [11, 5] }));
    expect(ok(await call(GET, { organizationId, documentId: 'doc' })).data).toEqual([]);
    expect(errorOf(await call(COMMENTS_GET, scope))).toEqual({ statusCode: 404, status: 'NOT_FOUND' });
  });

  it('is NOT_FOUND for an unknown thread, and bad input writes nothing', async () => {
    const { organizationId } = await seed([thread('t')]);
    const scope = { organizationId, documentId: 'doc' };
    expect(
      errorOf(await call(COMMENTS_ADD, { ...scope, annotationId: 'nope', commentData: [comment('a', 'x')] })),
    ).toEqual({
      statusCode: 404,
      status: 'NOT_FOUND',
    });
    for (const data of [
      { annotationId: 't', commentData: [] },
      { annotationId: 't', commentData: [comment('a', 'x'.repeat(20_001))] },
      { annotationId: 't', commentData: [comment('a', 'x', { commentId: 0 })] },
    ])
      expect(errorOf(await call(COMMENTS_ADD, { ...scope, ...data }))).toEqual({
        statusCode: 400,
        status: 'INVALID_ARGUMENT',
      });
    expect(
      errorOf(
        await call(COMMENTS_UPDATE, {
          ...scope,
          annotationId: 't',
          commentIds: Array.from({ length: 31 }, (_, i) => i + 1),
          updatedData: { commentText: 'x' },
        }),
      ),
    ).toEqual({ statusCode: 400, status: 'INVALID_ARGUMENT' });
    expect(errorOf(await call(COMMENTS_DELETE, { ...scope, annotationId: 't', commentIds: [] }))).toEqual({
      statusCode: 400,
      status: 'INVALID_ARGUMENT',
    });
    expect((ok(await call(COMMENTS_GET, { ...scope, annotationId: 't' })).data as Json[]).length).toBe(1);
  });
});

describe('tenancy', () => {
  it('a second key of the workspace and a key of another workspace can neither read nor change the threads', async () => {
    const { organizationId } = await seed([thread('t')]);
    const sibling = await siblingKey(tenant);
    const stranger = (await newTenant()).apiKeyHeaders;
    const scope = { organizationId, documentId: 'doc' };
    for (const who of [sibling, stranger]) {
      const attempts: Array<[string, Json]> = [
        [GET, { ...scope }],
        [UPDATE, { ...scope, annotationIds: ['t'], updatedData: { status: { id: 'X', name: 'X', type: 'terminal' } } }],
        [DELETE, { ...scope, annotationIds: ['t'] }],
        [COUNT, { organizationId, documentIds: ['doc'] }],
        [READ, { ...scope, annotationIds: ['t'], userId: 'u' }],
        [COMMENTS_ADD, { ...scope, annotationId: 't', commentData: [comment('x', 'x')] }],
        [COMMENTS_GET, { ...scope, annotationId: 't' }],
        [COMMENTS_UPDATE, { ...scope, annotationId: 't', commentIds: [1], updatedData: { commentText: 'x' } }],
        [COMMENTS_DELETE, { ...scope, annotationId: 't', commentIds: [1] }],
      ];
      for (const [path, data] of attempts)
        expect([path, errorOf(await call(path, data, who))]).toEqual([path, { statusCode: 404, status: 'NOT_FOUND' }]);
      // Adding with the create flags makes the other tenant's own organization, never touching this one's.
      ok(
        await call(
          ADD,
          { ...scope, createOrganization: true, createDocument: true, commentAnnotations: [thread('t')] },
          who,
        ),
      );
      expect(ids(await call(GET, scope, who))).toEqual(['t']);
    }
    const [mine] = ok(await call(GET, scope)).data as Json[];
    expect(mine).toMatchObject({ annotationId: 't', status: { id: 'OPEN' }, commentCount: 1 });
  });
});

describe('the cost of reads', () => {
  const meter = new CapacityMeter();
  let scope: { organizationId: string; documentId: string };

  beforeAll(async () => {
    scope = { organizationId: uniqueId('org'), documentId: 'big' };
    for (let batch = 0; batch < 6; batch += 1) {
      ok(
        await call(ADD, {
          ...scope,
          createOrganization: true,
          createDocument: true,
          commentAnnotations: Array.from({ length: 50 }, (_, i) => thread(`t${batch}-${i}`)),
        }),
      );
    }
    ok(await call(GET, { ...scope, pageSize: 1 }));
    meter.attach(dynamodb);
  });

  afterAll(() => meter.detach());

  it('reads a page of 10 of 300 threads for about the same deep in the listing as at its start', async () => {
    const first = await meter.measure(() => call(GET, { ...scope, pageSize: 10 }));
    let pageToken = ok(first.value).nextPageToken;
    for (let i = 0; i < 10; i += 1)
      pageToken = ok(await call(GET, { ...scope, pageSize: 10, pageToken })).nextPageToken;
    const deep = await meter.measure(() => call(GET, { ...scope, pageSize: 10, pageToken }));
    const all = await meter.measure(() => call(GET, { ...scope, pageSize: 300 }));

    expect((ok(deep.value).data as Json[]).length).toBe(10);
    // Per page: the index entries (~1 KB each) and one Query per thread (head and comments).
    expect(first.capacity.read).toBeLessThanOrEqual(15);
    expect(deep.capacity.read).toBeLessThanOrEqual(first.capacity.read + 2);
    expect(all.capacity.read).toBeGreaterThan(first.capacity.read * 10);
  });

  it('a filter the key does not serve examines at most one page per call', async () => {
    const filtered = await meter.measure(() => call(GET, { ...scope, pageSize: 10, locationIds: ['nowhere'] }));
    expect(ok(filtered.value).data).toEqual([]);
    expect(typeof ok(filtered.value).nextPageToken).toBe('string');
    expect(filtered.capacity.read).toBeLessThanOrEqual(8);
  });

  it('counts 300 threads from the slim index', async () => {
    const counted = await meter.measure(() =>
      call(COUNT, { organizationId: scope.organizationId, documentIds: ['big'], userId: 'ben' }),
    );
    expect(ok(counted.value).data).toEqual({ big: { total: 300, unread: 300 } });
    // ~0.25 KB per thread: 300 threads ≈ 75 KB ≈ 10 read units eventually consistent; a document with threads is
    // not read (they show it exists).
    expect(counted.capacity.read).toBeLessThanOrEqual(13);
    expect(counted.capacity.calls).toBe(2);
  });
});

describe("get reads a page's threads by key", () => {
  const meter = new CapacityMeter();
  /** The raw head items of the document's threads (gsi1), by annotation id. */
  const heads = async (organizationId: string) =>
    new Map(
      (await queryAll(documentThreadsQuery(tenant.apiKeyId, organizationId, 'doc'))).map((item) => [
        String(item.annotationId),
        item,
      ]),
    );
  /** The page as Get answers it, the DynamoDB commands it sent, and what they cost. */
  const page = async (organizationId: string, pageSize = 20) => {
    const commands: string[] = [];
    const measured = await meter.measure(() =>
      recordCommands(commands, () => call(GET, { organizationId, documentId: 'doc', pageSize })),
    );
    return { data: ok(measured.value).data as Json[], commands, capacity: measured.capacity };
  };
  /** The same threads read one Query each (Get with annotationIds), in the page's order. */
  const byQuery = async (organizationId: string, annotationIds: unknown[]) =>
    ok(await call(GET, { organizationId, annotationIds })).data as Json[];

  beforeAll(() => meter.attach(dynamodb));
  afterAll(() => meter.detach());

  it('lists each thread’s comment ids on its head, kept as comments are added and deleted', async () => {
    const { organizationId } = await seed([
      { annotationId: 't', commentData: [comment('ann', 'one', { commentId: 10 }), comment('ben', 'two')] },
    ]);
    const scope = { organizationId, documentId: 'doc', annotationId: 't' };
    expect((await heads(organizationId)).get('t')?.commentIds).toEqual([10, 11]);
    ok(await call(COMMENTS_ADD, { ...scope, commentData: [comment('cleo', 'three', { commentId: 5 })] }));
    ok(await call(COMMENTS_DELETE, { ...scope, commentIds: [10] }));
    expect((await heads(organizationId)).get('t')?.commentIds).toEqual([11, 5]);
    ok(
      await call(UPDATE, {
        organizationId,
        documentId: 'doc',
        annotationIds: ['t'],
        updatedData: { status: { id: 'DONE', name: 'Done', type: 'terminal' } },
      }),
    );
    expect((await heads(organizationId)).get('t')?.commentIds).toEqual([11, 5]);
  });

  it('reads the page’s comments in one BatchGetItem beside the listing, answering what a Query per thread answers', async () => {
    const { organizationId } = await seed(
      Array.from({ length: 12 }, (_, i) => ({
        annotationId: `t${i}`,
        commentData: [comment('ann', `first of t${i}`), comment('ben', `reply to t${i}`)],
      })),
    );
    // Ids that do not follow each other, and a thread changed since it was added.
    ok(
      await call(COMMENTS_ADD, {
        organizationId,
        documentId: 'doc',
        annotationId: 't3',
        commentData: [comment('cleo', 'late', { commentId: 40 })],
      }),
    );
    ok(await call(COMMENTS_DELETE, { organizationId, documentId: 'doc', annotationId: 't3', commentIds: [1] }));

    const read = await page(organizationId);
    expect(read.data.map((t) => t.annotationId)).toEqual([
      't3',
      ...Array.from({ length: 12 }, (_, i) => `t${11 - i}`).filter((id) => id !== 't3'),
    ]);
    expect(read.data).toEqual(
      await byQuery(
        organizationId,
        read.data.map((t) => t.annotationId),
      ),
    );
    // The organization and the document (at once), the listing, then the comments: no Query per thread.
    expect([...read.commands.slice(0, 2)].sort()).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem']);
    expect(read.commands.slice(2)).toEqual(['dynamodb:Query', 'dynamodb:BatchGetItem']);
    // 24 comments by key, ½ unit each (eventually consistent, each rounded up to 4 KB); 12 heads of the listing.
    expect(read.capacity.read).toBeLessThanOrEqual(2 + 2 + 12);
  });

  it('reads a thread by Query when its head lists no comment ids, more than a few, or one it no longer has', async () => {
    const many = Array.from({ length: MAX_BATCHED_COMMENTS + 1 }, (_, i) => comment('ann', `c${i}`));
    const { organizationId } = await seed([
      thread('old'),
      thread('gone'),
      { annotationId: 'long', commentData: many },
      thread('plain'),
    ]);
    const stored = await heads(organizationId);
    // A head written before heads listed their comments.
    await db.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: { pk: stored.get('old')?.pk, sk: 'A' },
        UpdateExpression: 'REMOVE commentIds',
      }),
    );
    // A comment gone while the index still lists the head that named it (a change the listing has not caught up
    // with): the thread is read whole, as it is now.
    const [goneComment] = await queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
      ExpressionAttributeValues: { ':pk': stored.get('gone')?.pk, ':c': 'C#' },
    });
    await db.send(new DeleteCommand({ TableName: TABLE_NAME, Key: { pk: goneComment.pk, sk: goneComment.sk } }));

    const read = await page(organizationId);
    expect(read.data.map((t) => t.annotationId)).toEqual(['plain', 'long', 'gone', 'old']);
    expect(read.data).toEqual(await byQuery(organizationId, ['plain', 'long', 'gone', 'old']));
    expect(read.data.find((t) => t.annotationId === 'gone')?.comments).toEqual([]);
    expect((read.data.find((t) => t.annotationId === 'long')?.comments as Json[]).length).toBe(
      MAX_BATCHED_COMMENTS + 1,
    );
    // The listing; by key the comments of plain and gone (gone's found missing), by Query old, long, then gone.
    expect(read.commands.filter((command) => command === 'dynamodb:Query').length).toBe(1 + 3);
    expect(read.commands.filter((command) => command === 'dynamodb:BatchGetItem').length).toBe(2);
  });
});

describe('document migration', () => {
  it('moves a document’s threads: every listing, mention, author, count and read state under the new id', async () => {
    const { runAsWorker } = await import('../../local/grant-check');
    const { runMigration } = await import('../../shared/domain/migration');
    const { getMigration } = await import('../../shared/db/migration');
    const { documentMigrationWorker } = await import('../../shared/workers');
    const { organizationId } = await seed([
      thread('a'),
      { annotationId: 'b', commentData: [comment('ben', 'x', { taggedUserContacts: [{ userId: 'carl' }] })] },
    ]);
    ok(await call(READ, { organizationId, documentId: 'doc', annotationIds: ['a'], userId: 'carl' }));
    const started = ok(
      await call('/v2/organizations/documents/migrate', { organizationId, documentId: 'doc', newDocumentId: 'moved' }),
    );
    const migration = await getMigration(tenant.apiKeyId, organizationId, (started.data as Json).migrationId as string);
    if (migration === undefined) throw new Error('no migration');
    expect(
      await runAsWorker(documentMigrationWorker, () => runMigration(migration, { deadline: Date.now() + 60_000 })),
    ).toBe('completed');

    const scope = { organizationId, documentId: 'moved' };
    expect(ids(await call(GET, scope))).toEqual(['b', 'a']);
    expect(ids(await call(GET, { ...scope, mentionedUserIds: ['carl'] }))).toEqual(['b']);
    expect(ids(await call(GET, { ...scope, userIds: ['ann'] }))).toEqual(['a']);
    expect(ok(await call(COUNT, { organizationId, documentIds: ['moved'], userId: 'carl' })).data).toEqual({
      moved: { total: 2, unread: 1 },
    });
    expect(ok(await call(COMMENTS_GET, { ...scope, annotationId: 'a' })).data).toEqual([
      expect.objectContaining({ commentId: 1 }),
    ]);
    expect(errorOf(await call(GET, { organizationId, documentId: 'doc' }))).toEqual({
      statusCode: 404,
      status: 'NOT_FOUND',
    });
  });
});

describe('what a comment sets off', () => {
  let own: Tenant;
  const as = () => own.apiKeyHeaders;
  const actionTypes = async (organizationId: string) =>
    (
      (ok(await call('/v2/activities/get', { organizationId, documentId: 'doc', pageSize: 100 }, as()))
        .data as Json[]) ?? []
    )
      .map((activity) => activity.actionType as string)
      .sort();

  beforeAll(async () => {
    own = await newTenant();
  });

  it('writes nothing to the activity log while the activity service is off, and still notifies', async () => {
    const organizationId = uniqueId('org');
    ok(
      await call(
        ADD,
        {
          organizationId,
          documentId: 'doc',
          createOrganization: true,
          createDocument: true,
          commentAnnotations: [
            { annotationId: 't', commentData: [comment('ann', 'hi', { taggedUserContacts: [{ userId: 'ben' }] })] },
          ],
        },
        as(),
      ),
    );
    expect(errorOf(await call('/v2/activities/get', { organizationId }, as()))).toMatchObject({ statusCode: 200 });
    expect(await actionTypes(organizationId)).toEqual([]);
    const feed = ok(await call('/v2/notifications/get', { organizationId, userId: 'ben' }, as())).data as Json[];
    expect(feed).toHaveLength(1);
  });

  it('records the standard comment activities, one notification per tagged user and new assignee, none for triggerActivities: false, and the same again writes nothing twice', async () => {
    ok(await call('/v2/workspace/activityconfig/update', { activityServiceConfig: { isEnabled: true } }, as()));
    const organizationId = uniqueId('org');
    const scope = { organizationId, documentId: 'doc' };
    ok(
      await call(
        ADD,
        {
          ...scope,
          createOrganization: true,
          createDocument: true,
          commentAnnotations: [
            {
              annotationId: 't',
              commentData: [
                comment('ann', 'Look', {
                  taggedUserContacts: [{ userId: 'ben', contact: { name: 'Ben' } }, { userId: 'carl' }],
                }),
              ],
            },
          ],
        },
        as(),
      ),
    );
    ok(
      await call(
        COMMENTS_ADD,
        { ...scope, annotationId: 't', commentData: [comment('ben', 'Quiet', { triggerActivities: false })] },
        as(),
      ),
    );
    ok(
      await call(
        UPDATE,
        {
          ...scope,
          annotationIds: ['t'],
          updatedData: {
            status: { id: 'DONE', name: 'Done', type: 'terminal' },
            assignedTo: { userId: 'dee' },
            priority: { id: 'P1', name: 'High' },
          },
        },
        as(),
      ),
    );
    ok(
      await call(
        COMMENTS_UPDATE,
        { ...scope, annotationId: 't', commentIds: [1], updatedData: { commentText: 'Look again' } },
        as(),
      ),
    );
    ok(await call(COMMENTS_DELETE, { ...scope, annotationId: 't', commentIds: [1] }, as()));

    expect(await actionTypes(organizationId)).toEqual([
      'comment.add',
      'comment.delete',
      'comment.update',
      'comment_annotation.add',
      'comment_annotation.assign',
      'comment_annotation.priority_change',
      'comment_annotation.status_change',
    ]);
    const feedOf = async (userId: string) =>
      (ok(await call('/v2/notifications/get', { organizationId, userId }, as())).data as Json[]).map(
        (n) => n.displayHeadlineMessageTemplate,
      );
    expect(await feedOf('ben')).toEqual(['{{actionUser.name}} mentioned you in a comment']);
    expect(await feedOf('carl')).toEqual(['{{actionUser.name}} mentioned you in a comment']);
    expect(await feedOf('dee')).toEqual(['{{actionUser.name}} assigned you a comment']);
    expect(await feedOf('ann')).toEqual([]);

    // Effects applied twice (a redelivery) are written once: their ids come from the thread and its version.
    const { effectsOf, applyEffects } = await import('../../shared/domain/comments/side-effects');
    const stored = await readThread(own.apiKeyId, organizationId, 't', { consistent: true });
    if (stored === undefined) throw new Error('thread missing');
    const effects = effectsOf(undefined, stored);
    await applyEffects(own.apiKeyId, scope, [effects]);
    await applyEffects(own.apiKeyId, scope, [effects]);
    const log = await actionTypes(organizationId);
    expect(log.filter((type) => type === 'comment_annotation.add')).toHaveLength(2);
    expect(await feedOf('dee')).toHaveLength(2);
  });
});

describe('large threads', () => {
  it('ends a page before 5 MB with a token, and refuses a thread past 4 MB of comments (RESOURCE_EXHAUSTED, nothing written)', async () => {
    const big = (userId: string) => ({
      commentText: 'x'.repeat(20_000),
      commentHtml: 'y'.repeat(20_000),
      from: { userId },
    });
    const { organizationId } = await seed([thread('a'), thread('b'), thread('c')]);
    const scope = { organizationId, documentId: 'doc' };
    // ~2 MB of comments per thread, 800 KB per request (the body limit is 1 MiB).
    for (const annotationId of ['a', 'b', 'c'])
      for (let i = 0; i < 3; i += 1)
        ok(
          await call(COMMENTS_ADD, {
            ...scope,
            annotationId,
            commentData: Array.from({ length: 18 }, () => big('ann')),
          }),
        );

    const first = ok(await call(GET, { ...scope, pageSize: 3 }));
    const second = ok(await call(GET, { ...scope, pageSize: 3, pageToken: first.nextPageToken }));
    const named = ok(await call(GET, { organizationId, annotationIds: ['a', 'b', 'c'] }));
    expect((first.data as Json[]).map((t) => t.annotationId)).toEqual(['c', 'b']);
    expect((second.data as Json[]).map((t) => t.annotationId)).toEqual(['a']);
    expect(second.nextPageToken).toBeUndefined();
    expect((named.data as Json[]).length).toBe(2);
    expect(typeof named.nextPageToken).toBe('string');

    // Two more rounds: 5 × 18 comments of 40 KB, 3.6 MB; a sixth would pass 4 MB.
    for (let round = 0; round < 2; round += 1)
      ok(
        await call(COMMENTS_ADD, {
          ...scope,
          annotationId: 'a',
          commentData: Array.from({ length: 18 }, () => big('ann')),
        }),
      );
    const refused = await call(COMMENTS_ADD, {
      ...scope,
      annotationId: 'a',
      commentData: Array.from({ length: 18 }, () => big('ann')),
    });
    expect(errorOf(refused)).toEqual({ statusCode: 429, status: 'RESOURCE_EXHAUSTED' });
    expect((ok(await call(COMMENTS_GET, { ...scope, annotationId: 'a' })).data as Json[]).length).toBe(1 + 5 * 18);
  });
});
