/**
 * Get Comment Annotations (decisions §16): threads newest `lastUpdated` first, by key.
 *
 * One filter family is read by key (shared/db/comment-annotation.ts): mentioned users, else authors (`userIds`),
 * else statuses, else the documents themselves; each (document, value) pair is one stream, and the streams are
 * merged by position, reading each in chunks of about its share of the page. `updatedAfter`/`updatedBefore`, and
 * the lower bound `createdAfter` implies (a thread is updated no earlier than it was created), are key ranges. The
 * other filters named in the same request (the other families, `locationIds`, `createdBefore`, `createdAfter`
 * itself, and with `viewerUserId` the threads' visibility) are checked on the entries read, never on more than
 * one page's worth per call: such a page may be short, even empty, and carries a token while any stream has more.
 * The page token records each stream's position.
 *
 * With `annotationIds` (≤ 30) the named threads are read (one Query each) and the filters checked on them.
 *
 * A page's threads are read from its entries (readListedThreads): an entry of a head carries the head and the ids of
 * its comments, which are read by key, all the page's in one BatchGetItem per 100 (a mention entry, or a head that
 * lists more than a few comments, is read by a Query of its thread). The editors the entries name are read and
 * decoded meanwhile.
 */
import { InvalidArgumentError, NotFoundError } from '../../core/errors';
import {
  listingEntryOf,
  listingPosition,
  readListedThreads,
  readStream,
  readThreads,
  streamPartition,
  type ListingEntry,
  type StreamKind,
} from '../../db/comment-annotation';
import { getDocuments, organizationExists } from '../../db/organization';
import { createPageToken, readPageToken } from '../../db/page-token';
import { sortableNumber } from '../../db/keys';
import { accessOfUsers } from '../access';
import { presentThreads } from './annotations';
import { loadEditors } from './thread-anchors';
import { presentThread, visibleTo } from './threads';

export interface ListAnnotationsInput {
  organizationId: string;
  documentId?: string;
  documentIds?: string[];
  annotationIds?: string[];
  userIds?: string[];
  mentionedUserIds?: string[];
  statusIds?: string[];
  locationIds?: string[];
  createdAfter?: number;
  createdBefore?: number;
  updatedAfter?: number;
  updatedBefore?: number;
  pageSize: number;
  pageToken?: string;
  viewerUserId?: string;
}

/** A page's JSON at most: Lambda answers at most 6 MB. */
const MAX_PAGE_BYTES = 5 * 1024 * 1024;

/** Streams one call may merge (documents × values of the keyed filter). */
export const MAX_STREAMS = 100;

interface StreamState {
  stream: { index: string; partition: string };
  /**
   * Where reading continues (the last entry read), and where the page token resumes: the last entry taken, else
   * where this call started (entries read but not taken are read again by the next page).
   */
  readBefore?: string;
  taken?: string;
  buffer: ListingEntry[];
  more: boolean;
  /** Finished (or not the viewer's) before this call. */
  startedDone: boolean;
}

const scopeOf = (apiKeyId: string, input: ListAnnotationsInput) => {
  const { pageSize: _size, pageToken: _token, ...query } = input;
  return { tenant: apiKeyId, query: { operation: 'commentannotations/get', ...query } };
};

/** The checks on an entry besides the keyed family. */
function entryFilter(input: ListAnnotationsInput, keyed: StreamKind): (entry: ListingEntry) => boolean {
  const in_ = (list: string[] | undefined, value: string | undefined) =>
    list === undefined || (value !== undefined && list.includes(value));
  return (entry) =>
    (keyed === 'author' || in_(input.userIds, entry.fromUserId)) &&
    (keyed === 'status' || in_(input.statusIds, entry.statusId)) &&
    (keyed === 'mention' ||
      input.mentionedUserIds === undefined ||
      entry.mentions.some((userId) => input.mentionedUserIds?.includes(userId))) &&
    in_(input.locationIds, entry.locationId) &&
    (input.createdAfter === undefined || entry.createdAt > input.createdAfter) &&
    (input.createdBefore === undefined || entry.createdAt < input.createdBefore) &&
    (input.updatedAfter === undefined || entry.lastUpdated > input.updatedAfter) &&
    (input.updatedBefore === undefined || entry.lastUpdated < input.updatedBefore) &&
    (input.viewerUserId === undefined || visibleTo(entry.visibility, entry.fromUserId, input.viewerUserId));
}

/** The documents the viewer has access to, of `documentIds`. */
async function viewable(apiKeyId: string, organizationId: string, documentIds: readonly string[], viewer?: string) {
  if (viewer === undefined) return new Set(documentIds);
  const access = await Promise.all(
    documentIds.map(async (documentId) => {
      const roles = await accessOfUsers(apiKeyId, organizationId, documentId, [viewer]);
      return roles.get(viewer) ? [documentId] : [];
    }),
  );
  return new Set(access.flat());
}

/** A page of threads as Get shows them, and the token of the next page. */
export async function listAnnotations(
  apiKeyId: string,
  input: ListAnnotationsInput,
): Promise<{ annotations: Array<ReturnType<typeof presentThread>>; nextPageToken?: string }> {
  const documentIds = input.documentIds ?? (input.documentId === undefined ? [] : [input.documentId]);
  if (documentIds.length === 0 && input.annotationIds === undefined)
    throw new InvalidArgumentError('documentId or documentIds is required unless annotationIds is given.');
  const [organization, documents] = await Promise.all([
    organizationExists(apiKeyId, input.organizationId),
    getDocuments(apiKeyId, input.organizationId, documentIds),
  ]);
  if (!organization) throw new NotFoundError('Organization not found.');
  const missing = documentIds.find((id) => !documents.has(id));
  if (missing !== undefined) throw new NotFoundError(`Document not found: ${missing}.`);
  const scope = scopeOf(apiKeyId, input);
  const cursor = input.pageToken === undefined ? undefined : await readPageToken(input.pageToken, scope);

  if (input.annotationIds !== undefined) return namedPage(apiKeyId, input, documentIds, cursor, scope);

  const keyed: StreamKind =
    input.mentionedUserIds !== undefined
      ? 'mention'
      : input.userIds !== undefined
        ? 'author'
        : input.statusIds !== undefined
          ? 'status'
          : 'document';
  const values: Array<string | undefined> = {
    mention: input.mentionedUserIds,
    author: input.userIds,
    status: input.statusIds,
    document: undefined,
  }[keyed] ?? [undefined];
  const pairs = documentIds.flatMap((documentId) => values.map((value) => ({ documentId, value })));
  if (pairs.length > MAX_STREAMS)
    throw new InvalidArgumentError(
      `Too many combinations of documents and filter values (${pairs.length}): at most ${MAX_STREAMS}.`,
    );
  const positions = (cursor?.s as Array<string | null> | undefined) ?? [];
  if (cursor !== undefined && positions.length !== pairs.length) throw new InvalidArgumentError('Invalid page token.');
  const allowed = await viewable(apiKeyId, input.organizationId, documentIds, input.viewerUserId);

  const lowest = Math.max(input.updatedAfter ?? -1, input.createdAfter ?? -1);
  const low = lowest < 0 ? undefined : sortableNumber(lowest + 1);
  const high = input.updatedBefore === undefined ? undefined : sortableNumber(input.updatedBefore);
  const states: StreamState[] = pairs.map(({ documentId, value }, index) => {
    const position = positions[index];
    const done = position === null || !allowed.has(documentId);
    return {
      stream: streamPartition(apiKeyId, input.organizationId, documentId, keyed, value),
      ...(typeof position === 'string' && position !== '' ? { readBefore: position, taken: position } : {}),
      buffer: [],
      more: !done,
      startedDone: done,
    };
  });
  const chunk = Math.ceil((input.pageSize + 1) / Math.max(1, states.length)) + 1;
  const keep = entryFilter(input, keyed);
  const page: ListingEntry[] = [];
  const resumeAfter: Array<Array<string | null>> = [];
  let examined = 0;
  let last: string | undefined;
  for (;;) {
    const full = page.length >= input.pageSize || examined >= input.pageSize;
    if (!full) {
      await Promise.all(
        states
          .filter((state) => state.buffer.length === 0 && state.more)
          .map(async (state) => {
            const read = await readStream(state.stream, { limit: chunk, before: state.readBefore, low, high });
            state.buffer = read.entries;
            state.more = read.more;
            if (read.entries.length > 0) state.readBefore = read.entries[read.entries.length - 1].position;
          }),
      );
    }
    let next: StreamState | undefined;
    for (const state of states)
      if (state.buffer.length > 0 && (next === undefined || state.buffer[0].position > next.buffer[0].position))
        next = state;
    if (next === undefined) break;
    // A thread in several streams (users it mentions) is taken once: its entries share a position.
    if (full && next.buffer[0].position !== last) break;
    const entry = next.buffer.shift() as ListingEntry;
    next.taken = entry.position;
    if (entry.position === last) continue;
    last = entry.position;
    examined += 1;
    if (keep(entry)) {
      page.push(entry);
      // Where the next page would start were this page cut after this entry (by bytes, below).
      resumeAfter.push(states.map((state) => (state.startedDone ? null : (state.taken ?? ''))));
    }
  }
  let resume: Array<string | null> = states.map((state) =>
    state.buffer.length === 0 && !state.more ? null : (state.taken ?? ''),
  );
  // The editors the entries name are read and decoded while the threads are read (each once).
  const editors = loadEditors(apiKeyId, input.organizationId, page);
  const threads = await readListedThreads(apiKeyId, input.organizationId, page);
  const annotations = await presentThreads(
    apiKeyId,
    input.organizationId,
    page.flatMap((entry) => {
      const thread = threads.get(entry.annotationId);
      return thread === undefined ? [] : [thread];
    }),
    editors,
  );
  const shown = cutByBytes(annotations);
  if (shown.length < annotations.length) {
    const index = page.findIndex((entry) => entry.annotationId === shown[shown.length - 1].annotationId);
    resume = resumeAfter[index];
  }
  return {
    annotations: shown,
    ...(resume.every((position) => position === null)
      ? {}
      : { nextPageToken: await createPageToken(scope, { s: resume }) }),
  };
}

/** A page of the named threads (all read: at most 30), newest first, after the token's position. */
async function namedPage(
  apiKeyId: string,
  input: ListAnnotationsInput,
  documentIds: readonly string[],
  cursor: Record<string, unknown> | undefined,
  scope: ReturnType<typeof scopeOf>,
) {
  const threads = await readThreads(apiKeyId, input.organizationId, input.annotationIds ?? []);
  const inDocuments = [...threads.values()].filter(
    (thread) => documentIds.length === 0 || documentIds.includes(thread.head.documentId),
  );
  const allowed = await viewable(
    apiKeyId,
    input.organizationId,
    [...new Set(inDocuments.map((thread) => thread.head.documentId))],
    input.viewerUserId,
  );
  const keep = entryFilter(input, 'document');
  const after = typeof cursor?.after === 'string' ? cursor.after : undefined;
  const sorted = inDocuments
    .filter((thread) => allowed.has(thread.head.documentId))
    .map((thread) => ({ thread, position: listingPosition(thread.head.lastUpdated, thread.head.annotationId) }))
    .filter(
      ({ thread, position }) =>
        keep(listingEntryOf(thread.head, position)) && (after === undefined || position < after),
    )
    .sort((a, b) => (a.position < b.position ? 1 : -1));
  const page = sorted.slice(0, input.pageSize);
  const annotations = await presentThreads(
    apiKeyId,
    input.organizationId,
    page.map(({ thread }) => thread),
  );
  const shown = cutByBytes(annotations);
  return {
    annotations: shown,
    ...(sorted.length > shown.length
      ? { nextPageToken: await createPageToken(scope, { after: page[shown.length - 1].position }) }
      : {}),
  };
}

/** The first threads of a page whose JSON stays within 5 MB (at least one: a thread is at most 4 MB). */
function cutByBytes<T>(annotations: readonly T[]): T[] {
  let bytes = 0;
  const shown: T[] = [];
  for (const annotation of annotations) {
    bytes += Buffer.byteLength(JSON.stringify(annotation));
    if (bytes > MAX_PAGE_BYTES && shown.length > 0) break;
    shown.push(annotation);
  }
  return shown;
}
