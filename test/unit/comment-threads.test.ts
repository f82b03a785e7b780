/** Comment threads as values: sanitized HTML, ids, derived fields, and what a change sets off (no I/O). */
import { effectsOf } from '../../shared/domain/comments/side-effects';
import { sanitizeCommentHtml, withSanitizedHtml } from '../../shared/domain/comments/sanitize';
import {
  commentIdsFor,
  newComment,
  newThread,
  withComments,
  type CommentInput,
} from '../../shared/domain/comments/threads';

const ids = { annotationId: 't', organizationId: 'o', documentId: 'd' };
const comment = (userId: string, extra: Record<string, unknown> = {}) => ({
  commentText: 'x',
  from: { userId },
  ...extra,
});

describe('comment HTML', () => {
  it.each([
    ['<script>alert(1)</script><p>ok</p>', '<p>ok</p>'],
    ['<style>p{}</style><b>b</b>', '<b>b</b>'],
    ['<p onclick="x()" onmouseover="y()">p</p>', '<p>p</p>'],
    ['<a href="javascript:alert(1)">a</a>', '<a>a</a>'],
    ['<a href="JaVaScRiPt:alert(1)">a</a>', '<a>a</a>'],
    ['<img src="javascript:x" onerror="y()">', '<img />'],
    ['<a href="https://example.com" target="_blank">a</a>', '<a href="https://example.com" target="_blank">a</a>'],
    ['<span data-user-id="u1" class="mention">@U</span>', '<span data-user-id="u1" class="mention">@U</span>'],
    ['<iframe src="https://evil"></iframe>x', 'x'],
  ])('%s → %s', async (input, output) => {
    expect(await sanitizeCommentHtml(input)).toBe(output);
  });

  it('is sanitized in every comment that has it, and the others are left as they are', async () => {
    const plain: CommentInput = comment('a');
    const html: CommentInput = comment('b', { commentHtml: '<script>x()</script><b>b</b>' });
    const [kept, cleaned] = await withSanitizedHtml([plain, html]);
    expect(kept).toBe(plain);
    expect(cleaned).toEqual(comment('b', { commentHtml: '<b>b</b>' }));
  });
});

describe('threads', () => {
  it('numbers comments above the highest id given or stored', () => {
    expect(commentIdsFor([comment('a'), comment('a', { commentId: 7 }), comment('a')], undefined)).toEqual([8, 7, 9]);
    const thread = newThread(ids, {}, [comment('a', { commentId: 3 })], 1000);
    expect(commentIdsFor([comment('b')], thread)).toEqual([4]);
  });

  it('derives the head from its comments: count, last comment, mentions, version', () => {
    const thread = newThread(ids, {}, [comment('a', { taggedUserContacts: [{ userId: 'b' }] })], 1000);
    expect(thread.head).toMatchObject({
      from: { userId: 'a' },
      status: { id: 'OPEN', name: 'Open', type: 'default' },
      visibility: { type: 'public' },
      commentCount: 1,
      lastCommentBy: 'a',
      lastCommentAt: 1000,
      mentions: ['b'],
      version: 1,
    });
    const later = withComments(thread.head, [...thread.comments, newComment(comment('c'), 2, 2000, 2)], 2000);
    expect(later.head).toMatchObject({
      commentCount: 2,
      lastCommentBy: 'c',
      lastCommentAt: 2000,
      lastUpdated: 2000,
      version: 2,
    });
  });
});

describe('what a change sets off', () => {
  const start = newThread(ids, {}, [comment('a', { taggedUserContacts: [{ userId: 'b' }, { userId: 'a' }] })], 1000);

  it('adds: the thread and its comment, a notification per tagged user but the author', () => {
    const effects = effectsOf(undefined, start);
    expect(effects.activities.map((a) => a.actionType)).toEqual(['comment_annotation.add', 'comment.add']);
    expect(effects.notices.map((n) => [n.notifyUser.userId, n.eventType])).toEqual([['b', 'comment.add']]);
  });

  it('status, priority and assignment changes; a new assignee is notified once', () => {
    const after = withComments(
      { ...start.head, status: { id: 'DONE', name: 'Done', type: 'terminal' }, assignedTo: { userId: 'z' } },
      start.comments,
      2000,
    );
    const effects = effectsOf(start, after);
    expect(effects.activities.map((a) => a.actionType)).toEqual([
      'comment_annotation.status_change',
      'comment_annotation.assign',
    ]);
    expect(effects.notices.map((n) => [n.notifyUser.userId, n.eventType])).toEqual([
      ['z', 'comment_annotation.assign'],
    ]);
    expect(effectsOf(after, withComments(after.head, after.comments, 3000)).notices).toEqual([]);
  });

  it('a comment with triggerActivities: false makes no record, and the same change gives the same ids', () => {
    const quiet = withComments(
      start.head,
      [...start.comments, newComment(comment('b', { triggerActivities: false }), 2, 2000, 2)],
      2000,
    );
    expect(effectsOf(start, quiet).activities).toEqual([]);
    expect(effectsOf(undefined, start)).toEqual(effectsOf(undefined, start));
  });

  it('deletes: each comment and the thread', () => {
    expect(effectsOf(start, undefined).activities.map((a) => a.actionType)).toEqual([
      'comment.delete',
      'comment_annotation.delete',
    ]);
  });
});
