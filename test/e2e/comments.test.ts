/** Comment annotations over HTTP against the local stack: a thread, a reply, paging, resolution, unread counts, deletion. */
import { newApiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

describe('comment annotations over HTTP', () => {
  it('adds threads, replies, pages them newest first, resolves one, counts unread, and deletes the last comment with its thread', async () => {
    const headers = await newApiKeyHeaders();
    const scope = { organizationId: uniqueId('org'), documentId: 'doc' };
    const comment = (userId: string, commentText: string) => ({ commentText, from: { userId } });

    const added = await post(
      '/v2/commentannotations/add',
      {
        ...scope,
        createOrganization: true,
        createDocument: true,
        commentAnnotations: [
          { annotationId: 'older', commentData: [comment('ann', 'First')] },
          {
            annotationId: 'newer',
            commentData: [{ ...comment('ann', 'Second'), commentHtml: '<b>Second</b><script>x()</script>' }],
          },
        ],
      },
      headers,
    );
    const reply = await post(
      '/v2/commentannotations/comments/add',
      { ...scope, annotationId: 'older', commentData: [comment('ben', 'Reply')] },
      headers,
    );
    const first = await post('/v2/commentannotations/get', { ...scope, pageSize: 1 }, headers);
    const second = await post(
      '/v2/commentannotations/get',
      { ...scope, pageSize: 1, pageToken: first.body.result.nextPageToken },
      headers,
    );
    const resolved = await post(
      '/v2/commentannotations/update',
      { ...scope, annotationIds: ['newer'], updatedData: { status: { id: 'DONE', name: 'Done', type: 'terminal' } } },
      headers,
    );
    const unread = await post(
      '/v2/commentannotations/count',
      { ...scope, documentIds: ['doc'], userId: 'ann' },
      headers,
    );
    const removed = await post(
      '/v2/commentannotations/comments/delete',
      { ...scope, annotationId: 'newer', commentIds: [1] },
      headers,
    );
    const left = await post('/v2/commentannotations/get', scope, headers);

    expect(added.status).toBe(200);
    expect(added.body.result.data).toEqual({
      older: { success: true, annotationId: 'older', commentIds: [1], message: 'Comment annotation added.' },
      newer: { success: true, annotationId: 'newer', commentIds: [1], message: 'Comment annotation added.' },
    });
    expect(reply.body.result.data).toEqual([2]);
    // The reply made `older` the newest.
    expect(first.body.result.data.map((t: { annotationId: string }) => t.annotationId)).toEqual(['older']);
    expect(first.body.result.data[0].comments.map((c: { commentText: string }) => c.commentText)).toEqual([
      'First',
      'Reply',
    ]);
    expect(second.body.result.data[0]).toMatchObject({
      annotationId: 'newer',
      comments: [{ commentHtml: '<b>Second</b>' }],
    });
    expect(second.body.result).not.toHaveProperty('nextPageToken');
    expect(resolved.body.result.data).toEqual({ newer: { success: true, message: 'Comment annotation updated.' } });
    expect(unread.body.result.data).toEqual({ doc: { total: 2, unread: 1 } });
    expect(removed.body.result.data).toEqual({ 1: { success: true, message: 'Comment deleted.' } });
    expect(left.body.result.data.map((t: { annotationId: string }) => t.annotationId)).toEqual(['older']);
  });

  it('anchors a thread in an editor and answers where the anchored text is after an edit before it', async () => {
    const headers = await newApiKeyHeaders();
    const scope = { organizationId: uniqueId('org'), documentId: 'doc' };
    const editor = { ...scope, editorId: 'body' };
    const created = await post(
      '/v2/crdt/add',
      {
        ...editor,
        type: 'xml',
        format: 'markdown',
        content: '# Notes\n\nShip the beta on Friday.',
        createOrganization: true,
        createDocument: true,
      },
      headers,
    );
    expect(created.status).toBe(200);
    const index = '# Notes'.length - 2 + '\n\nShip the beta on '.length;
    const added = await post(
      '/v2/commentannotations/add',
      {
        ...scope,
        commentAnnotations: [
          {
            annotationId: 'when',
            anchor: { editorId: 'body', index, length: 6 },
            commentData: [{ commentText: 'Which Friday?', from: { userId: 'ann' } }],
          },
        ],
      },
      headers,
    );
    expect(added.body.result.data.when.success).toBe(true);
    const edited = await post(
      '/v2/crdt/update',
      { ...editor, format: 'markdown', content: '# Notes\n\nPlease ship the beta on Friday.' },
      headers,
    );
    expect(edited.status).toBe(200);
    const got = await post('/v2/commentannotations/get', { ...scope, annotationIds: ['when'] }, headers);

    expect(got.status).toBe(200);
    expect(got.body.result.data[0].anchor).toEqual({
      editorId: 'body',
      from: expect.any(String),
      to: expect.any(String),
      start: index + 'Please '.length,
      end: index + 'Please '.length + 6,
      quotedText: 'Friday',
      orphaned: false,
    });
  });
});
