/**
 * Request and result schemas of the comment annotation operations (decisions §16), shared by their handlers
 * (functions/comments/*.ts).
 */
import * as z from 'zod/mini';
import {
  clientId,
  documentedRules,
  jsonObject,
  maybeEmptyText,
  noDuplicateIds,
  nonEmptyListOf,
  nonEmptyUniqueIds,
  uniqueIds,
  uniqueListOf,
  userReference,
} from './schemas';
import { clientObject } from './results';
import { MAX_POSITION_CHARS } from '../domain/comments/anchor-limits';

/** Text and HTML of a comment: at most 20,000 characters each. */
export const MAX_COMMENT_CHARACTERS = 20_000;
/** `context` of a thread or a comment: at most 50 keys. */
export const MAX_CONTEXT_KEYS = 50;

/** An annotation id: a client id of at most 128 characters. */
export const annotationId = () => clientId().check(z.maxLength(128, 'Must be at most 128 characters.'));

/** A comment id: an integer from 1 to 2^53 - 1. */
export const commentId = () =>
  z.int().check(z.minimum(1, 'Must be at least 1.'), z.maximum(Number.MAX_SAFE_INTEGER, 'Must be a safe integer.'));

export const context = () =>
  documentedRules(
    jsonObject(16 * 1024).check(
      z.refine(
        (value: Record<string, unknown>) => Object.keys(value).length <= MAX_CONTEXT_KEYS,
        `Must have at most ${MAX_CONTEXT_KEYS} keys.`,
      ),
    ),
    { maxProperties: MAX_CONTEXT_KEYS },
  );

const commentText = () => maybeEmptyText(MAX_COMMENT_CHARACTERS);

export const taggedUserContacts = () =>
  uniqueListOf(z.object({ userId: clientId(), contact: z.optional(jsonObject(4 * 1024)) }), 'userId', 'a userId', {
    max: 50,
  });

/** A comment as add accepts it: text or HTML (at least one not empty), its author, the users it tags. */
export const comment = () =>
  documentedRules(
    z
      .object({
        commentId: z.optional(commentId()),
        commentText: z.optional(commentText()),
        commentHtml: z.optional(commentText()),
        from: userReference(),
        taggedUserContacts: z.optional(taggedUserContacts()),
        context: z.optional(context()),
        triggerActivities: z.optional(z.boolean()),
      })
      .check(
        z.refine(
          (value) => (value.commentText ?? '') !== '' || (value.commentHtml ?? '') !== '',
          'Must have a commentText or a commentHtml.',
        ),
      ),
    {
      anyOf: ['commentText', 'commentHtml'].map((field) => ({
        required: [field],
        properties: { [field]: { minLength: 1 } },
      })),
    },
  );

/** 1 to 50 comments, no two with the same commentId. */
export const commentData = () => uniqueListOf(comment(), 'commentId', 'a commentId', { min: 1, max: 50 });

export const status = () =>
  z.object({
    id: annotationId(),
    name: maybeEmptyText(200),
    type: z.enum(['default', 'ongoing', 'terminal']),
  });

export const priority = () => z.object({ id: annotationId(), name: maybeEmptyText(200) });

export const location = () => z.object({ id: clientId(), locationName: z.optional(maybeEmptyText(500)) });

export const visibility = () =>
  z.object({
    type: z.enum(['public', 'restricted']),
    userIds: z.optional(uniqueIds('a userId')),
  });

/** A relative position as a client sends it: base64 of `Y.encodeRelativePosition` (checked against the editor). */
const position = () =>
  z
    .string()
    .check(
      z.minLength(1, 'Must not be empty.'),
      z.maxLength(MAX_POSITION_CHARS, `Must be at most ${MAX_POSITION_CHARS} characters.`),
    );

/** Text offsets of an anchor made by the service: UTF-16 code units of the editor's plain text (§15 `text`). */
const offset = () => z.int().check(z.minimum(0, 'Must not be negative.'));

/**
 * A thread's anchor (decisions §16): relative positions made by the client (base64 of Y.encodeRelativePosition in
 * that editor), or an index and length in the editor's plain text for the service to anchor.
 */
export const anchor = () =>
  z.union([
    z.object({ editorId: clientId(), from: position(), to: position() }),
    z.object({ editorId: clientId(), index: offset(), length: offset() }),
  ]);

/**
 * An anchor as reads answer it, resolved against the editor's current state: `start`/`end` offsets in its plain
 * text while the anchored text is there; `orphaned: true` and no `start`/`end` once it was deleted (or its editor).
 */
export const anchorResult = () =>
  z.union([
    z.object({
      editorId: z.string(),
      from: z.string(),
      to: z.string(),
      start: z.int().check(z.minimum(0)),
      end: z.int().check(z.minimum(0)),
      quotedText: z.string(),
      orphaned: z.literal(false),
    }),
    z.object({
      editorId: z.string(),
      from: z.string(),
      to: z.string(),
      quotedText: z.string(),
      orphaned: z.literal(true),
    }),
  ]);

/** The fields of a thread that add and update set. */
export const threadFields = () => ({
  status: z.optional(status()),
  priority: z.optional(priority()),
  assignedTo: z.optional(userReference()),
  context: z.optional(context()),
  location: z.optional(location()),
  visibility: z.optional(visibility()),
});

/** 1 to 30 annotation ids, none repeated. */
export const annotationIds = () =>
  documentedRules(nonEmptyListOf(annotationId(), 30).check(noDuplicateIds((id: string) => id, 'an annotationId')), {
    uniqueItems: true,
  });

/** 1 to 30 comment ids, none repeated. */
export const commentIds = () =>
  documentedRules(nonEmptyListOf(commentId(), 30).check(noDuplicateIds((id: number) => id, 'a commentId')), {
    uniqueItems: true,
  });

export const documentScope = () => ({ organizationId: clientId(), documentId: clientId() });

/** 1 to 30 ids of a filter. */
export const filterIds = (what: string) => nonEmptyUniqueIds(what, 30);

export const userObject = () =>
  z.object({ userId: z.string(), name: z.optional(z.string()), email: z.optional(z.string()) });

/** A comment as the operations answer it. */
export const commentResult = () =>
  z.object({
    commentId: z.number(),
    commentText: z.optional(z.string()),
    commentHtml: z.optional(z.string()),
    from: userObject(),
    taggedUserContacts: z.array(z.object({ userId: z.string(), contact: z.optional(clientObject()) })),
    context: z.optional(clientObject()),
    createdAt: z.number(),
    lastUpdated: z.number(),
    edited: z.boolean(),
  });

/** A thread as Get answers it. */
export const annotationResult = () =>
  z.object({
    annotationId: z.string(),
    documentId: z.string(),
    createdAt: z.number(),
    lastUpdated: z.number(),
    from: userObject(),
    comments: z.array(commentResult()),
    status: z.object({ id: z.string(), name: z.string(), type: z.enum(['default', 'ongoing', 'terminal']) }),
    priority: z.optional(z.object({ id: z.string(), name: z.string() })),
    assignedTo: z.optional(userObject()),
    context: z.optional(clientObject()),
    location: z.optional(z.object({ id: z.string(), locationName: z.optional(z.string()) })),
    visibility: z.object({ type: z.enum(['public', 'restricted']), userIds: z.optional(z.array(z.string())) }),
    anchor: z.optional(anchorResult()),
    commentCount: z.number(),
    resolved: z.boolean(),
  });
