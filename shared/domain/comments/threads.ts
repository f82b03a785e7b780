/**
 * Comment threads as values (decisions §16): building a thread from a request, changing it, and showing it. No I/O.
 */
import type {
  CommentRecord,
  Thread,
  ThreadHead,
  UserRef,
  Visibility,
  CommentStatus,
} from '../../db/comment-annotation';
import type { ResolvedAnchor, StoredAnchor } from './anchors';

export const DEFAULT_STATUS: CommentStatus = { id: 'OPEN', name: 'Open', type: 'default' };
export const DEFAULT_VISIBILITY: Visibility = { type: 'public' };
/** Comments one thread holds at most: a thread is read whole (one Query), and answered whole by Get. */
export const MAX_COMMENTS_PER_THREAD = 500;
/** Bytes of a thread's comments as JSON at most: a thread always fits one response (Lambda answers ≤ 6 MB). */
export const MAX_THREAD_BYTES = 4 * 1024 * 1024;

/** The size of the comments as the API shows them (JSON). */
export const commentBytes = (comments: readonly CommentRecord[]) =>
  comments.reduce((sum, comment) => sum + Buffer.byteLength(JSON.stringify(presentComment(comment))), 0);

/** A comment as add and update accept it (the schemas are in shared/http/comment-schemas.ts). */
export interface CommentInput {
  commentId?: number;
  commentText?: string;
  commentHtml?: string;
  from: UserRef;
  taggedUserContacts?: Array<{ userId: string; contact?: Record<string, unknown> }>;
  context?: Record<string, unknown>;
  triggerActivities?: boolean;
}

export interface ThreadFields {
  from?: UserRef;
  status?: CommentStatus;
  priority?: { id: string; name: string };
  assignedTo?: UserRef;
  context?: Record<string, unknown>;
  location?: { id: string; locationName?: string };
  visibility?: Visibility;
}

/** Ids for the comments of `inputs`: the caller's, else the next above every id the thread and the request hold. */
export function commentIdsFor(inputs: readonly CommentInput[], thread: Thread | undefined): number[] {
  let next = Math.max(thread?.head.maxCommentId ?? 0, ...inputs.map((input) => input.commentId ?? 0));
  return inputs.map((input) => input.commentId ?? (next += 1));
}

/**
 * The comment of `input` with id `commentId`, written at `now` as the `sequence`th of its thread. Its HTML is stored
 * as given: the operation sanitized it first (./sanitize.ts `withSanitizedHtml`).
 */
export function newComment(input: CommentInput, commentId: number, now: number, sequence: number): CommentRecord {
  return {
    commentId,
    ...(input.commentText === undefined ? {} : { commentText: input.commentText }),
    ...(input.commentHtml === undefined ? {} : { commentHtml: input.commentHtml }),
    from: input.from,
    taggedUserContacts: input.taggedUserContacts ?? [],
    ...(input.context === undefined ? {} : { context: input.context }),
    createdAt: now,
    lastUpdated: now,
    edited: false,
    sequence,
    ...(input.triggerActivities === false ? { triggerActivities: false } : {}),
  };
}

/** The head's derived fields (counts, last comment, mentions) recomputed from its comments, written at `now`. */
export function withComments(head: ThreadHead, comments: CommentRecord[], now: number): Thread {
  const last = comments[comments.length - 1];
  const mentions = [...new Set(comments.flatMap((comment) => comment.taggedUserContacts.map((c) => c.userId)))];
  return {
    head: {
      ...head,
      commentCount: comments.length,
      lastCommentAt: last?.createdAt ?? head.lastCommentAt,
      lastCommentBy: last?.from.userId ?? head.lastCommentBy,
      maxCommentId: Math.max(head.maxCommentId, ...comments.map((comment) => comment.commentId)),
      sequence: Math.max(head.sequence, ...comments.map((comment) => comment.sequence)),
      mentions,
      lastUpdated: Math.max(now, head.lastUpdated),
      version: head.version + 1,
    },
    comments,
  };
}

/** A new thread of `fields` and its first comments. */
export function newThread(
  ids: { annotationId: string; organizationId: string; documentId: string },
  fields: ThreadFields & { anchor?: StoredAnchor },
  comments: readonly CommentInput[],
  now: number,
): Thread {
  const commentIds = commentIdsFor(comments, undefined);
  const records = comments.map((input, index) => newComment(input, commentIds[index], now, index + 1));
  const head: ThreadHead = {
    ...ids,
    createdAt: now,
    lastUpdated: now,
    from: fields.from ?? comments[0].from,
    status: fields.status ?? DEFAULT_STATUS,
    ...(fields.priority === undefined ? {} : { priority: fields.priority }),
    ...(fields.assignedTo === undefined ? {} : { assignedTo: fields.assignedTo }),
    ...(fields.context === undefined ? {} : { context: fields.context }),
    ...(fields.location === undefined ? {} : { location: fields.location }),
    visibility: fields.visibility ?? DEFAULT_VISIBILITY,
    ...(fields.anchor === undefined ? {} : { anchor: fields.anchor }),
    commentCount: 0,
    lastCommentAt: now,
    lastCommentBy: comments[0].from.userId,
    maxCommentId: 0,
    sequence: 0,
    mentions: [],
    version: 0,
  };
  return withComments(head, records, now);
}

/** The comment as the API shows it. */
export function presentComment(comment: CommentRecord) {
  return {
    commentId: comment.commentId,
    ...(comment.commentText === undefined ? {} : { commentText: comment.commentText }),
    ...(comment.commentHtml === undefined ? {} : { commentHtml: comment.commentHtml }),
    from: comment.from,
    taggedUserContacts: comment.taggedUserContacts,
    ...(comment.context === undefined ? {} : { context: comment.context }),
    createdAt: comment.createdAt,
    lastUpdated: comment.lastUpdated,
    edited: comment.edited,
  };
}

/** The thread as the API shows it, with its anchor resolved against its editor's current state (./thread-anchors.ts). */
export function presentThread(thread: Thread, anchor?: ResolvedAnchor) {
  const { head } = thread;
  return {
    annotationId: head.annotationId,
    documentId: head.documentId,
    createdAt: head.createdAt,
    lastUpdated: head.lastUpdated,
    from: head.from,
    comments: thread.comments.map(presentComment),
    status: head.status,
    ...(head.priority === undefined ? {} : { priority: head.priority }),
    ...(head.assignedTo === undefined ? {} : { assignedTo: head.assignedTo }),
    ...(head.context === undefined ? {} : { context: head.context }),
    ...(head.location === undefined ? {} : { location: head.location }),
    visibility: head.visibility,
    ...(anchor === undefined ? {} : { anchor }),
    commentCount: head.commentCount,
    resolved: head.status.type === 'terminal',
  };
}

/** Whether `userId` may see the thread by its visibility (document access is checked apart). */
export function visibleTo(visibility: Visibility, fromUserId: string, userId: string): boolean {
  return visibility.type === 'public' || fromUserId === userId || (visibility.userIds ?? []).includes(userId);
}
