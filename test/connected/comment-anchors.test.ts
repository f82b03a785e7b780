/**
 * Anchors of comment threads (decisions §16 "Anchors") through the real middleware against DynamoDB Local: made from
 * an index and length or sent as a client's relative positions, checked when written (per item in add's batch,
 * nothing written for a refused item), resolved against the editor's current state on every get (edits before the
 * anchor move it, deleting the anchored text orphans it, the thread stays listed), each editor read once per request.
 */
import * as Y from 'yjs';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME, db, dynamodb } from '../../shared/db/client';
import { readThread } from '../../shared/db/comment-annotation';
import { crdtDocumentPartition } from '../../shared/db/crdt';
import { encodeFrames } from '../../shared/domain/live/framing';
import { updateMessage } from '../../shared/domain/live/protocol';
import { newTenant, siblingKey, type Tenant } from '../support/fixtures';
import { uniqueId } from '../support/ids';
import { routeCaller, type Invocation } from '../support/invoke';
import { callSocket, openLiveRoom } from '../support/live-harness';

type Json = Record<string, unknown>;

const ADD = '/v2/commentannotations/add';
const GET = '/v2/commentannotations/get';
const UPDATE = '/v2/commentannotations/update';
const COUNT = '/v2/commentannotations/count';

let tenant: Tenant;
const call = routeCaller(() => tenant.apiKeyHeaders);

const ok = (response: Invocation) => {
  if (response.statusCode !== 200) throw new Error(`${response.statusCode}: ${JSON.stringify(response.body)}`);
  return response.body.result as { data: any; message: string };
};
const errorOf = (response: Invocation) => ({ statusCode: response.statusCode, status: response.body.error?.status });

const MARKDOWN = '# Plan\n\nThe quick brown fox jumps over the lazy dog.\n\nA second paragraph.';

const thread = (annotationId: string, anchor: Json) => ({
  annotationId,
  anchor,
  commentData: [{ commentText: `about ${annotationId}`, from: { userId: 'ann' } }],
});

let scope: { organizationId: string; documentId: string };
const editor = (editorId = 'body') => ({ ...scope, editorId });

/** The editor's plain text (§15 `text`), the offsets of anchors. */
const textOf = async (editorId = 'body') =>
  ok(await call('/v2/crdt/get', { ...editor(editorId), format: 'text' })).data[0].data as string;
/** The editor's current state, as a client holds it. */
const clientDoc = async (editorId = 'body') => {
  const doc = new Y.Doc();
  Y.applyUpdate(
    doc,
    Buffer.from(ok(await call('/v2/crdt/get', { ...editor(editorId), format: 'yjs' })).data[0].state, 'base64'),
  );
  return doc;
};
const base64 = (position: Y.RelativePosition) => Buffer.from(Y.encodeRelativePosition(position)).toString('base64');

const add = (annotations: Json[]) => call(ADD, { ...scope, commentAnnotations: annotations });
const anchorOf = async (annotationId: string) => {
  const [got] = ok(await call(GET, { ...scope, annotationIds: [annotationId] })).data as Json[];
  return got.anchor as Json;
};
const setMarkdown = async (content: string) =>
  ok(await call('/v2/crdt/update', { ...editor(), format: 'markdown', content }));

beforeAll(async () => {
  tenant = await newTenant();
});

beforeEach(async () => {
  scope = { organizationId: uniqueId('org'), documentId: 'doc' };
  ok(
    await call('/v2/crdt/add', {
      ...editor(),
      type: 'xml',
      format: 'markdown',
      content: MARKDOWN,
      createOrganization: true,
      createDocument: true,
    }),
  );
});

describe('anchors made from an index and length', () => {
  it('follow edits before them, and orphan the thread (still listed) when the anchored text is deleted', async () => {
    const text = await textOf();
    const index = text.indexOf('brown fox');
    const added = ok(await add([thread('t', { editorId: 'body', index, length: 9 })]));
    expect(added.data.t).toMatchObject({ success: true });

    const made = await anchorOf('t');
    // Exactly §16's shape: no storage-only field (length, fromBlocks, toBlocks).
    expect(made).toEqual({
      editorId: 'body',
      from: expect.any(String),
      to: expect.any(String),
      start: index,
      end: index + 9,
      quotedText: 'brown fox',
      orphaned: false,
    });

    await setMarkdown(MARKDOWN.replace('The quick', 'The very quick'));
    const moved = await anchorOf('t');
    expect(moved).toEqual({ ...made, start: index + 5, end: index + 14 });
    expect((await textOf()).slice(index + 5, index + 14)).toBe('brown fox');

    await setMarkdown(MARKDOWN.replace('quick brown fox jumps', 'quick jumps'));
    expect(await anchorOf('t')).toEqual({
      editorId: 'body',
      from: made.from,
      to: made.to,
      quotedText: 'brown fox',
      orphaned: true,
    });
    const listed = ok(await call(GET, scope)).data as Json[];
    expect(listed.map((t) => t.annotationId)).toEqual(['t']);
    expect(ok(await call(COUNT, { organizationId: scope.organizationId, documentIds: ['doc'] })).data).toEqual({
      doc: { total: 1 },
    });
  });

  it('follow a Yjs update typed before them', async () => {
    const text = await textOf();
    ok(await add([thread('t', { editorId: 'body', index: text.indexOf('lazy dog'), length: 8 })]));
    const doc = await clientDoc();
    const before = Y.encodeStateVector(doc);
    const sentence = (doc.getXmlFragment('content').get(1) as Y.XmlElement).get(0) as Y.XmlText;
    sentence.insert(0, 'Now: ');
    const yjsUpdate = Buffer.from(Y.encodeStateAsUpdate(doc, before)).toString('base64');
    ok(await call('/v2/crdt/update', { ...editor(), yjsUpdate }));

    const moved = await anchorOf('t');
    const now = await textOf();
    expect(moved).toMatchObject({ start: now.indexOf('lazy dog'), end: now.indexOf('lazy dog') + 8 });
    expect(moved).toMatchObject({ quotedText: 'lazy dog', orphaned: false });
    expect(moved.start).toBe(text.indexOf('lazy dog') + 5);
  });

  it('follow a live connection typing before them', async () => {
    const room = await openLiveRoom(tenant);
    scope = { organizationId: room.ids.organizationId, documentId: room.ids.documentId };
    ok(await call('/v2/crdt/add', { ...editor(), type: 'text', data: 'Hello brave new world' }));
    ok(await add([thread('live', { editorId: 'body', index: 12, length: 9 })]));
    expect(await anchorOf('live')).toMatchObject({ start: 12, end: 21, quotedText: 'new world' });

    const doc = await clientDoc();
    const before = Y.encodeStateVector(doc);
    doc.getText('content').insert(0, 'Oh, ');
    const ann = await room.open('ann');
    const [frame] = encodeFrames(updateMessage(Y.encodeStateAsUpdate(doc, before)), 'a1');
    expect(await callSocket('$default', ann, { body: frame })).toMatchObject({ statusCode: 200 });

    expect(ok(await call('/v2/crdt/get', editor())).data[0].data).toBe('Oh, Hello brave new world');
    expect(await anchorOf('live')).toMatchObject({ start: 16, end: 25, quotedText: 'new world', orphaned: false });
  });

  it('past the text are OUT_OF_RANGE naming the field, per item; the other items are written', async () => {
    const text = await textOf();
    const result = ok(
      await add([
        thread('far', { editorId: 'body', index: text.length + 10, length: 1 }),
        thread('long', { editorId: 'body', index: 0, length: text.length + 1 }),
        thread('fine', { editorId: 'body', index: 0, length: 4 }),
      ]),
    );
    expect(result.data.far).toEqual({ success: false, message: expect.stringMatching(/^OUT_OF_RANGE: anchor\.index/) });
    expect(result.data.long).toEqual({
      success: false,
      message: expect.stringMatching(/^OUT_OF_RANGE: anchor\.length/),
    });
    expect(result.data.fine).toMatchObject({ success: true });
    expect(await readThread(tenant.apiKeyId, scope.organizationId, 'far')).toBeUndefined();
    expect(await readThread(tenant.apiKeyId, scope.organizationId, 'long')).toBeUndefined();
    expect(await anchorOf('fine')).toMatchObject({ start: 0, end: 4, quotedText: 'Plan' });
  });
});

describe('anchors made by the client', () => {
  it('resolve: relative positions of the stored state, base64', async () => {
    const doc = await clientDoc();
    const sentence = (doc.getXmlFragment('content').get(1) as Y.XmlElement).get(0) as Y.XmlText;
    const from = base64(Y.createRelativePositionFromTypeIndex(sentence, 4));
    const to = base64(Y.createRelativePositionFromTypeIndex(sentence, 9, -1));
    ok(await add([thread('client', { editorId: 'body', from, to })]));

    const start = (await textOf()).indexOf('quick');
    expect(await anchorOf('client')).toEqual({
      editorId: 'body',
      from,
      to,
      start,
      end: start + 5,
      quotedText: 'quick',
      orphaned: false,
    });
  });

  it('that do not decode are INVALID_ARGUMENT naming the field, and nothing is written', async () => {
    const doc = await clientDoc();
    const sentence = (doc.getXmlFragment('content').get(1) as Y.XmlElement).get(0) as Y.XmlText;
    const good = base64(Y.createRelativePositionFromTypeIndex(sentence, 4));
    // Positions of another document's items: they decode, but point into nothing this editor holds.
    const elsewhere = new Y.Doc();
    elsewhere.getText('content').insert(0, 'other text');
    const foreign = base64(Y.createRelativePositionFromTypeIndex(elsewhere.getText('content'), 2));
    const result = ok(
      await add([
        thread('garbage', { editorId: 'body', from: 'not base64!', to: good }),
        thread('truncated', { editorId: 'body', from: good, to: good.slice(0, 4) }),
        thread('foreign', { editorId: 'body', from: foreign, to: good }),
      ]),
    );
    expect(result.data).toEqual({
      garbage: { success: false, message: expect.stringMatching(/^INVALID_ARGUMENT: anchor\.from /) },
      truncated: { success: false, message: expect.stringMatching(/^INVALID_ARGUMENT: anchor\.to /) },
      foreign: { success: false, message: expect.stringMatching(/^INVALID_ARGUMENT: anchor\.from /) },
    });
    for (const id of ['garbage', 'truncated', 'foreign'])
      expect(await readThread(tenant.apiKeyId, scope.organizationId, id)).toBeUndefined();
  });
});

describe('update', () => {
  it('re-anchors the named threads, checked as add does (the request refused as a whole), and null removes it', async () => {
    ok(await add([thread('t', { editorId: 'body', index: 0, length: 4 })]));
    const [bad, far] = await Promise.all([
      call(UPDATE, {
        ...scope,
        annotationIds: ['t'],
        updatedData: { anchor: { editorId: 'body', from: '@@', to: '@@' } },
      }),
      call(UPDATE, {
        ...scope,
        annotationIds: ['t'],
        updatedData: { anchor: { editorId: 'body', index: 9999, length: 1 } },
      }),
    ]);
    expect(errorOf(bad)).toEqual({ statusCode: 400, status: 'INVALID_ARGUMENT' });
    expect(bad.body.error?.message).toMatch(/anchor\.from/);
    expect(errorOf(far)).toEqual({ statusCode: 400, status: 'OUT_OF_RANGE' });
    expect(far.body.error?.message).toMatch(/anchor\.index/);
    expect(await anchorOf('t')).toMatchObject({ quotedText: 'Plan', start: 0 });

    const index = (await textOf()).indexOf('second');
    ok(
      await call(UPDATE, {
        ...scope,
        annotationIds: ['t'],
        updatedData: { anchor: { editorId: 'body', index, length: 6 } },
      }),
    );
    expect(await anchorOf('t')).toMatchObject({ start: index, end: index + 6, quotedText: 'second', orphaned: false });

    ok(await call(UPDATE, { ...scope, annotationIds: ['t'], updatedData: { anchor: null } }));
    const [got] = ok(await call(GET, { ...scope, annotationIds: ['t'] })).data as Json[];
    expect(got).not.toHaveProperty('anchor');
  });
});

describe('editors', () => {
  it('an unknown editor, or another tenant’s, is NOT_FOUND and nothing is written', async () => {
    const other = await newTenant();
    const otherCall = routeCaller(() => other.apiKeyHeaders);
    ok(
      await otherCall('/v2/crdt/add', {
        ...editor('theirs'),
        type: 'text',
        data: 'secret',
        createOrganization: true,
        createDocument: true,
      }),
    );
    const sibling = await siblingKey(tenant);
    for (const [request, who] of [
      [add([thread('t', { editorId: 'nope', index: 0, length: 1 })]), 'unknown'],
      [add([thread('t', { editorId: 'theirs', index: 0, length: 1 })]), 'another tenant'],
      [
        call(ADD, { ...scope, commentAnnotations: [thread('t', { editorId: 'body', index: 0, length: 1 })] }, sibling),
        'a sibling key',
      ],
      [
        call(UPDATE, {
          ...scope,
          annotationIds: ['t'],
          updatedData: { anchor: { editorId: 'theirs', index: 0, length: 1 } },
        }),
        'update',
      ],
    ] as const)
      expect([who, errorOf(await request)]).toEqual([who, { statusCode: 404, status: 'NOT_FOUND' }]);
    expect(await readThread(tenant.apiKeyId, scope.organizationId, 't')).toBeUndefined();
  });

  it('a thread whose editor no longer exists is answered, its anchor orphaned', async () => {
    ok(await add([thread('t', { editorId: 'body', index: 0, length: 4 })]));
    const { Items = [] } = await db.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :editor)',
        ExpressionAttributeValues: {
          ':pk': crdtDocumentPartition(tenant.apiKeyId, scope.organizationId, scope.documentId),
          ':editor': 'E#body#',
        },
      }),
    );
    expect(Items.length).toBeGreaterThan(0);
    for (const item of Items)
      await db.send(new DeleteCommand({ TableName: TABLE_NAME, Key: { pk: item.pk, sk: item.sk } }));
    expect(await anchorOf('t')).toEqual({
      editorId: 'body',
      from: expect.any(String),
      to: expect.any(String),
      quotedText: 'Plan',
      orphaned: true,
    });
  });

  it('each editor is read once per request, whatever the number of threads anchored in it', async () => {
    ok(await call('/v2/crdt/add', { ...editor('side'), type: 'text', data: 'a side note' }));
    const text = await textOf();
    const threads = (count: number, prefix: string) =>
      Array.from({ length: count }, (_, i) => thread(`${prefix}${i}`, { editorId: 'body', index: i, length: 3 }));
    /** The editors a request read: the key prefix of each editor Query it sent. */
    const editorReads = async (request: () => Promise<Invocation>) => {
      const prefixes: string[] = [];
      dynamodb.middlewareStack.add(
        (next, context) => async (args) => {
          const values = (args.input as { ExpressionAttributeValues?: Record<string, unknown> })
            .ExpressionAttributeValues;
          const prefix = values?.[':editor'];
          if (context.commandName === 'QueryCommand' && typeof prefix === 'string') prefixes.push(prefix);
          return next(args);
        },
        { step: 'initialize', name: 'editorReads' },
      );
      try {
        ok(await request());
      } finally {
        dynamodb.middlewareStack.remove('editorReads');
      }
      return prefixes.sort();
    };
    expect(await editorReads(() => add(threads(1, 'a')))).toEqual(['E#body#']);
    expect(
      await editorReads(() => add([...threads(20, 'b'), thread('side', { editorId: 'side', index: 2, length: 4 })])),
    ).toEqual(['E#body#', 'E#side#']);
    expect(await editorReads(() => call(GET, { ...scope, pageSize: 100 }))).toEqual(['E#body#', 'E#side#']);

    const answered = ok(await call(GET, { ...scope, pageSize: 100 })).data as Json[];
    expect(answered).toHaveLength(22);
    expect(answered.find((t) => t.annotationId === 'b7')?.anchor).toMatchObject({
      start: 7,
      end: 10,
      quotedText: text.slice(7, 10),
    });
    expect(answered.find((t) => t.annotationId === 'side')?.anchor).toMatchObject({ start: 2, quotedText: 'side' });
  });

  it('a page reads its editors beside its threads, not after them, by document and by mentioned user', async () => {
    ok(
      await add(
        Array.from({ length: 5 }, (_, i) => ({
          ...thread(`m${i}`, { editorId: 'body', index: i, length: 3 }),
          commentData: [{ commentText: 'see', from: { userId: 'ann' }, taggedUserContacts: [{ userId: 'ben' }] }],
        })),
      ),
    );
    /**
     * What the request sent and what answered, in order: the editor's Query sent, each thread's Query answered (a
     * mention entry), the page's comments read by key answered (heads the listing read).
     */
    const events = async (request: () => Promise<Invocation>) => {
      const seen: string[] = [];
      dynamodb.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as {
            ExpressionAttributeValues?: Record<string, unknown>;
            IndexName?: string;
            RequestItems?: Record<string, { Keys?: Array<{ pk?: unknown }> }>;
          };
          const values = input.ExpressionAttributeValues ?? {};
          if (context.commandName === 'BatchGetItemCommand') {
            const keys = Object.values(input.RequestItems ?? {}).flatMap((request) => request.Keys ?? []);
            const result = await next(args);
            if (keys.length > 0 && keys.every((key) => String(key.pk).includes('#CA#'))) seen.push('comments answered');
            return result;
          }
          if (context.commandName !== 'QueryCommand') return next(args);
          if (typeof values[':editor'] === 'string') seen.push('editor sent');
          const result = await next(args);
          if (input.IndexName === undefined && String(values[':pk']).includes('#CA#')) seen.push('thread answered');
          return result;
        },
        { step: 'initialize', name: 'pageReads' },
      );
      try {
        const answered = ok(await request()).data as Json[];
        expect(answered).toHaveLength(5);
        expect(answered.every((t) => (t.anchor as Json).orphaned === false)).toBe(true);
      } finally {
        dynamodb.middlewareStack.remove('pageReads');
      }
      return seen;
    };
    // By document: the entries are the heads, the comments of all five read in one call by key.
    const byDocument = await events(() => call(GET, { ...scope, pageSize: 10 }));
    expect(byDocument.filter((event) => event !== 'editor sent')).toEqual(['comments answered']);
    expect(byDocument.indexOf('editor sent')).toBe(0);
    // By mentioned user: the entries are mention entries, each thread read by its Query.
    const byMention = await events(() => call(GET, { ...scope, pageSize: 10, mentionedUserIds: ['ben'] }));
    expect(byMention.filter((event) => event === 'editor sent')).toHaveLength(1);
    expect(byMention.filter((event) => event === 'thread answered')).toHaveLength(5);
    expect(byMention.indexOf('editor sent')).toBeLessThan(byMention.lastIndexOf('thread answered'));
  });
});
