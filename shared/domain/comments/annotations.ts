/**
 * Comment annotations (decisions §16): threads of comments on a document, in the hosted service's
 * `commentannotations` shape. Keys and reads are in shared/db/comment-annotation.ts; values in ./threads.ts.
 *
 * Rules where §16 is silent (also in docs/project-decisions.md):
 * - Every operation names `organizationId` and the document(s); an unknown organization or document is NOT_FOUND
 *   (add creates them with `createOrganization` / `createDocument`). A thread of another document of the
 *   organization is "not found" for operations on this document.
 * - An annotation id already in the organization fails its add item (`success: false`); a comment id already in
 *   the thread is ALREADY_EXISTS for comments/add (its result is a plain list, not a batch).
 * - A thread holds at most 500 comments (RESOURCE_EXHAUSTED past that).
 * - A user's own comment marks the thread read for them; `unread` counts the threads whose last comment is newer
 *   than the user's last read and not theirs.
 */
import { newId } from '../../crypto/tokens';
import {
  AbortedError,
  AlreadyExistsError,
  NotFoundError,
  ResourceExhaustedError,
  ServiceError,
} from '../../core/errors';
import {
  CommentExists,
  ThreadChanged,
  deleteThread,
  documentCountEntries,
  markRead,
  readThread,
  readThreads,
  threadWriteItems,
  writeThreadEntries,
  type StoredThread,
  type Thread,
  type UserRef,
} from '../../db/comment-annotation';
import {
  ensureOrganizationItem,
  getDocument,
  getDocuments,
  organizationExists,
  upsertDocumentItem,
} from '../../db/organization';
import type { TransactItem } from '../../db/transact';
import { accessOfUsers } from '../access';
import { batchResult, notWritten, settleEach, type BatchResult, type ItemResult } from '../batch-result';
import { assertDocumentsWritable, documentsIn, transactGuarded } from '../document-locks';
import { sanitizeCommentHtml, withSanitizedHtml } from './sanitize';
import { applyEffects, effectsOf } from './side-effects';
import {
  anchorFailure,
  makeAnchor,
  makeAnchors,
  resolveThreadAnchors,
  type AnchorInput,
  type LoadedEditors,
} from './thread-anchors';
import {
  MAX_COMMENTS_PER_THREAD,
  MAX_THREAD_BYTES,
  commentBytes,
  commentIdsFor,
  newComment,
  newThread,
  presentComment,
  presentThread,
  withComments,
  type CommentInput,
  type ThreadFields,
} from './threads';

export interface DocumentScope {
  organizationId: string;
  documentId: string;
}

/** Attempts of a write that meets a concurrent change of its thread before it gives up (ABORTED). */
const WRITE_ATTEMPTS = 3;

/** The organization and the document exist; NOT_FOUND otherwise. */
export async function requireDocument(apiKeyId: string, scope: DocumentScope): Promise<void> {
  const [organization, document] = await Promise.all([
    organizationExists(apiKeyId, scope.organizationId),
    getDocument(apiKeyId, scope.organizationId, scope.documentId),
  ]);
  if (!organization) throw new NotFoundError('Organization not found.');
  if (!document) throw new NotFoundError('Document not found.');
}

/** Every one of the documents exists in the organization; NOT_FOUND naming the first that does not. */
export async function requireDocuments(apiKeyId: string, organizationId: string, documentIds: readonly string[]) {
  const [organization, documents] = await Promise.all([
    organizationExists(apiKeyId, organizationId),
    getDocuments(apiKeyId, organizationId, documentIds),
  ]);
  if (!organization) throw new NotFoundError('Organization not found.');
  const missing = documentIds.find((id) => !documents.has(id));
  if (missing !== undefined) throw new NotFoundError(`Document not found: ${missing}.`);
}

/**
 * The threads as Get shows them, each anchor resolved against its editor's current state (`editors`: the ones the
 * caller started loading already).
 */
export async function presentThreads(
  apiKeyId: string,
  organizationId: string,
  threads: readonly Thread[],
  editors?: LoadedEditors,
) {
  const anchors = await resolveThreadAnchors(apiKeyId, organizationId, threads, editors);
  return threads.map((thread) => presentThread(thread, anchors.get(thread.head.annotationId)));
}

/**
 * Changes a thread of the document: reads it (strongly consistent), lets `change` make the new thread (or
 * `'delete'`), writes it with the document's lock check, and reads again when another writer changed it in between.
 * Undefined when the thread is not in the document.
 */
export async function changeThread<R>(
  apiKeyId: string,
  scope: DocumentScope,
  annotationId: string,
  change: (thread: StoredThread) => { after: Thread | 'delete'; result: R; readers?: string[]; actor?: UserRef },
  now: number,
): Promise<R | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    const thread = await readThread(apiKeyId, scope.organizationId, annotationId, {
      consistent: true,
      withReaders: true,
    });
    if (thread === undefined || thread.head.documentId !== scope.documentId) return undefined;
    const { after, result, readers, actor } = change(thread);
    if (after !== 'delete' && commentBytes(after.comments) > MAX_THREAD_BYTES)
      throw new ResourceExhaustedError(`A thread's comments hold at most ${MAX_THREAD_BYTES / 1024 / 1024} MB.`);
    try {
      if (after === 'delete') {
        await deleteThread(apiKeyId, thread);
      } else {
        await transactGuarded(apiKeyId, threadWriteItems(apiKeyId, thread, after), [scope]);
        await writeThreadEntries(apiKeyId, thread.head, after.head, { userIds: readers ?? [], readAt: now });
      }
    } catch (error) {
      if (!(error instanceof ThreadChanged)) throw error;
      if (attempt >= WRITE_ATTEMPTS) throw new AbortedError('The thread kept changing while it was written; retry.');
      continue;
    }
    await applyEffects(apiKeyId, scope, [effectsOf(thread, after === 'delete' ? undefined : after, actor)]);
    return result;
  }
}

/** An annotation item of Add Comment Annotations. */
export interface AnnotationInput extends ThreadFields {
  annotationId?: string;
  anchor?: AnchorInput;
  commentData: CommentInput[];
}

export interface AddAnnotationsInput extends DocumentScope {
  commentAnnotations: AnnotationInput[];
  verifyUserPermissions?: boolean;
  createOrganization?: boolean;
  createDocument?: boolean;
}

type AddResult = ItemResult & { annotationId?: string; commentIds?: number[] };

/**
 * Adds threads with their first comments, one transaction each (with the document's lock check). The organization
 * and document are created, when missing and asked for, with the first thread written. Anchors are checked (their
 * editor exists) before anything is written. Throws NotFoundError, FailedPreconditionError (document migrating).
 */
export async function addAnnotations(apiKeyId: string, input: AddAnnotationsInput, now = Date.now()) {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  const guarded = documentsIn(scope.organizationId, [scope.documentId]);
  const [organization, document] = await Promise.all([
    organizationExists(apiKeyId, scope.organizationId),
    getDocument(apiKeyId, scope.organizationId, scope.documentId),
    assertDocumentsWritable(apiKeyId, guarded),
  ]);
  const structure: TransactItem[] = [];
  if (!organization) {
    if (!input.createOrganization) throw new NotFoundError('Organization not found.');
    structure.push(ensureOrganizationItem(apiKeyId, scope.organizationId, now));
  }
  if (!document) {
    if (!input.createDocument) throw new NotFoundError('Document not found.');
    structure.push(upsertDocumentItem(apiKeyId, scope.organizationId, scope.documentId, {}, now));
  }
  const sanitized = await Promise.all(
    input.commentAnnotations.map(async (annotation) => ({
      ...annotation,
      commentData: await withSanitizedHtml(annotation.commentData),
    })),
  );
  const items = sanitized.map((annotation) => ({
    annotation,
    annotationId: annotation.annotationId ?? newId('ca_'),
  }));
  // Every anchor is made or checked before anything is written: each editor read and decoded once.
  const anchors = await makeAnchors(
    apiKeyId,
    scope,
    items.map(({ annotation }) => annotation.anchor),
  );
  const authors = items.map(({ annotation }) => annotation.from?.userId ?? annotation.commentData[0].from.userId);
  const [existing, access] = await Promise.all([
    readThreads(
      apiKeyId,
      scope.organizationId,
      items.map((item) => item.annotationId),
      { consistent: true },
    ),
    input.verifyUserPermissions
      ? accessOfUsers(apiKeyId, scope.organizationId, scope.documentId, [...new Set(authors)], now)
      : Promise.resolve(undefined),
  ]);

  const write = async (index: number, withStructure: readonly TransactItem[]): Promise<AddResult> => {
    const { annotation, annotationId } = items[index];
    if (existing.has(annotationId)) return { success: false, message: 'Comment annotation already exists.' };
    if (access !== undefined && !access.get(authors[index]))
      return { success: false, message: `PERMISSION_DENIED: user ${authors[index]} has no access to the document.` };
    const anchor = anchors[index];
    if (anchor instanceof ServiceError) return anchorFailure(anchor);
    const { anchor: _input, ...fields } = annotation;
    const thread = newThread(
      { annotationId, ...scope },
      { ...fields, ...(anchor === undefined ? {} : { anchor }) },
      annotation.commentData,
      now,
    );
    try {
      await transactGuarded(apiKeyId, [...withStructure, ...threadWriteItems(apiKeyId, undefined, thread)], guarded);
    } catch (error) {
      if (error instanceof ThreadChanged) return { success: false, message: 'Comment annotation already exists.' };
      throw error;
    }
    await writeThreadEntries(apiKeyId, undefined, thread.head, {
      userIds: [...new Set(thread.comments.map((comment) => comment.from.userId))],
      readAt: now,
    });
    await applyEffects(apiKeyId, scope, [effectsOf(undefined, thread)]);
    return {
      success: true,
      annotationId,
      commentIds: thread.comments.map((comment) => comment.commentId),
      message: 'Comment annotation added.',
    };
  };
  const results: AddResult[] = [];
  let next = 0;
  // One at a time until a thread is written with the structure, then the rest at once (as Add Recordings).
  while (structure.length > 0 && next < items.length && !results.some((r) => r.success)) {
    results.push(await write(next, structure));
    next += 1;
  }
  const rest = items.slice(next).map((_, offset) => next + offset);
  const written = () => results.some((r) => r.success);
  const settled = await settleEach(
    rest,
    (index) => String(index),
    (index) => write(index, []),
  ).catch((error: unknown) => {
    if (!written()) throw error;
    return batchResult(rest, String, () => notWritten(error));
  });
  for (const index of rest) results.push(settled[String(index)]);
  return batchResult(
    items.map((item, index) => ({ ...item, index })),
    (item) => item.annotationId,
    (item) => results[item.index],
  );
}

export interface UpdatedAnnotationData extends Omit<ThreadFields, 'from'> {
  anchor?: AnchorInput | null;
}

/** Updates the named threads of the document; each a batch item. Throws NotFoundError for the document or an anchor's editor. */
export async function updateAnnotations(
  apiKeyId: string,
  input: DocumentScope & { annotationIds: string[]; updatedData: UpdatedAnnotationData },
  now = Date.now(),
): Promise<BatchResult> {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  await requireDocument(apiKeyId, scope);
  await assertDocumentsWritable(apiKeyId, [scope]);
  const { anchor: anchorInput, ...fields } = input.updatedData;
  const anchor =
    anchorInput === undefined || anchorInput === null ? anchorInput : await makeAnchor(apiKeyId, scope, anchorInput);
  return settleEach(
    input.annotationIds,
    (id) => id,
    async (annotationId) => {
      const done = await changeThread(
        apiKeyId,
        scope,
        annotationId,
        (thread) => {
          const head = { ...thread.head, ...fields };
          if (anchor === null) delete head.anchor;
          else if (anchor !== undefined) head.anchor = anchor;
          return { after: withComments(head, thread.comments, now), result: true };
        },
        now,
      );
      return done ? { success: true, message: 'Comment annotation updated.' } : NOT_FOUND_ITEM;
    },
  );
}

const NOT_FOUND_ITEM = { success: false, message: 'Comment annotation not found.' } as const;

/** Deletes the named threads of the document with their comments. */
export async function deleteAnnotations(
  apiKeyId: string,
  input: DocumentScope & { annotationIds: string[] },
  now = Date.now(),
): Promise<BatchResult> {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  await requireDocument(apiKeyId, scope);
  await assertDocumentsWritable(apiKeyId, [scope]);
  return settleEach(
    input.annotationIds,
    (id) => id,
    async (annotationId) =>
      (await changeThread(apiKeyId, scope, annotationId, () => ({ after: 'delete', result: true }), now))
        ? { success: true, message: 'Comment annotation deleted.' }
        : NOT_FOUND_ITEM,
  );
}

/** Marks the named threads of the document read by `userId` now. */
export async function readAnnotations(
  apiKeyId: string,
  input: DocumentScope & { annotationIds: string[]; userId: string },
  now = Date.now(),
): Promise<BatchResult> {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  await requireDocument(apiKeyId, scope);
  const threads = await readThreads(apiKeyId, scope.organizationId, input.annotationIds, { consistent: true });
  const found = [...threads.values()].filter((thread) => thread.head.documentId === scope.documentId);
  await markRead(
    apiKeyId,
    found.map((thread) => thread.head),
    input.userId,
    now,
  );
  const marked = new Set(found.map((thread) => thread.head.annotationId));
  return batchResult(
    input.annotationIds,
    (id) => id,
    (id) => (marked.has(id) ? { success: true, message: 'Comment annotation marked as read.' } : NOT_FOUND_ITEM),
  );
}

/**
 * `{<documentId>: {total, unread?}}` for each document (each must exist). A document with threads exists (deleting
 * a document deletes its threads), so only the documents without any are looked up: counting 30 documents costs
 * their index Queries alone (~0.5 RCU each, and as much for the user's read markers), not a read of each document.
 */
export async function countAnnotations(
  apiKeyId: string,
  input: { organizationId: string; documentIds: string[]; userId?: string },
): Promise<Record<string, { total: number; unread?: number }>> {
  const entries = await Promise.all(
    input.documentIds.map((documentId) =>
      documentCountEntries(apiKeyId, input.organizationId, documentId, input.userId),
    ),
  );
  const empty = input.documentIds.filter((_, index) => entries[index].threads.length === 0);
  if (empty.length > 0) await requireDocuments(apiKeyId, input.organizationId, empty);
  const counts = input.documentIds.map((documentId, index) => {
    const { threads, readAt } = entries[index];
    if (input.userId === undefined) return [documentId, { total: threads.length }] as const;
    const unread = threads.filter(
      (thread) =>
        thread.lastCommentBy !== input.userId && thread.lastCommentAt > (readAt.get(thread.annotationId) ?? -1),
    ).length;
    return [documentId, { total: threads.length, unread }] as const;
  });
  return Object.fromEntries(counts);
}

/** Adds comments to a thread of the document; answers their ids. */
export async function addComments(
  apiKeyId: string,
  input: DocumentScope & { annotationId: string; commentData: CommentInput[] },
  now = Date.now(),
): Promise<number[]> {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  await requireDocument(apiKeyId, scope);
  await assertDocumentsWritable(apiKeyId, [scope]);
  const commentData = await withSanitizedHtml(input.commentData);
  let ids: number[] = [];
  try {
    const done = await changeThread(
      apiKeyId,
      scope,
      input.annotationId,
      (thread) => {
        const taken = new Set(thread.comments.map((comment) => comment.commentId));
        const clash = commentData.find((comment) => comment.commentId !== undefined && taken.has(comment.commentId));
        if (clash !== undefined) throw new AlreadyExistsError(`Comment ${clash.commentId} already exists.`);
        if (thread.comments.length + commentData.length > MAX_COMMENTS_PER_THREAD)
          throw new ResourceExhaustedError(`A thread holds at most ${MAX_COMMENTS_PER_THREAD} comments.`);
        ids = commentIdsFor(commentData, thread);
        const added = commentData.map((comment, index) =>
          newComment(comment, ids[index], now, thread.head.sequence + index + 1),
        );
        return {
          after: withComments(thread.head, [...thread.comments, ...added], now),
          result: true,
          readers: [...new Set(added.map((comment) => comment.from.userId))],
          actor: added[0].from,
        };
      },
      now,
    );
    if (!done) throw new NotFoundError('Comment annotation not found.');
  } catch (error) {
    if (error instanceof CommentExists) throw new AlreadyExistsError(`Comment ${error.commentId} already exists.`);
    throw error;
  }
  return ids;
}

/** The thread's comments, oldest first, optionally only the named ones. */
export async function getComments(
  apiKeyId: string,
  input: DocumentScope & { annotationId: string; commentIds?: number[] },
) {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  await requireDocument(apiKeyId, scope);
  const thread = await readThread(apiKeyId, scope.organizationId, input.annotationId);
  if (thread === undefined || thread.head.documentId !== scope.documentId)
    throw new NotFoundError('Comment annotation not found.');
  const wanted = input.commentIds === undefined ? undefined : new Set(input.commentIds);
  return thread.comments.filter((comment) => wanted?.has(comment.commentId) ?? true).map(presentComment);
}

export interface UpdatedCommentData {
  commentText?: string;
  commentHtml?: string;
  taggedUserContacts?: CommentInput['taggedUserContacts'];
  context?: Record<string, unknown>;
}

/** Changes the named comments of a thread (in one write); batch keyed by commentId. */
export async function updateComments(
  apiKeyId: string,
  input: DocumentScope & { annotationId: string; commentIds: number[]; updatedData: UpdatedCommentData },
  now = Date.now(),
): Promise<BatchResult> {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  await requireDocument(apiKeyId, scope);
  await assertDocumentsWritable(apiKeyId, [scope]);
  const { commentHtml, ...rest } = input.updatedData;
  const changes = {
    ...rest,
    ...(commentHtml === undefined ? {} : { commentHtml: await sanitizeCommentHtml(commentHtml) }),
  };
  const found = await changeThread(
    apiKeyId,
    scope,
    input.annotationId,
    (thread) => {
      const named = new Set(input.commentIds);
      const comments = thread.comments.map((comment) =>
        named.has(comment.commentId) ? { ...comment, ...changes, lastUpdated: now, edited: true } : comment,
      );
      return {
        after: withComments(thread.head, comments, now),
        result: new Set(thread.comments.map((comment) => comment.commentId)),
      };
    },
    now,
  );
  if (found === undefined) throw new NotFoundError('Comment annotation not found.');
  return batchResult(input.commentIds, String, (id) =>
    found.has(id) ? { success: true, message: 'Comment updated.' } : { success: false, message: 'Comment not found.' },
  );
}

/** Deletes the named comments of a thread; deleting its last comment deletes the thread. */
export async function deleteComments(
  apiKeyId: string,
  input: DocumentScope & { annotationId: string; commentIds: number[] },
  now = Date.now(),
): Promise<BatchResult> {
  const scope = { organizationId: input.organizationId, documentId: input.documentId };
  await requireDocument(apiKeyId, scope);
  await assertDocumentsWritable(apiKeyId, [scope]);
  const found = await changeThread(
    apiKeyId,
    scope,
    input.annotationId,
    (thread) => {
      const named = new Set(input.commentIds);
      const comments = thread.comments.filter((comment) => !named.has(comment.commentId));
      return {
        after: comments.length === 0 ? 'delete' : withComments(thread.head, comments, now),
        result: new Set(thread.comments.map((comment) => comment.commentId)),
      };
    },
    now,
  );
  if (found === undefined) throw new NotFoundError('Comment annotation not found.');
  return batchResult(input.commentIds, String, (id) =>
    found.has(id) ? { success: true, message: 'Comment deleted.' } : { success: false, message: 'Comment not found.' },
  );
}
