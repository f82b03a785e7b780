/**
 * Recording annotations (api-spec "Recording annotation" and "Recordings", decisions §8 and §10): add (ext) and
 * get. The field rules live here so that the handler's schema and the stored shape agree.
 *
 * Rules where the contract is silent (also in the README):
 * - Every recording field is optional; `type` defaults to `recorder`. An attachment needs an http(s) `url`; its
 *   other fields are optional. Texts and numbers are bounded, and one recording is at most 256 KB as JSON, so it
 *   always fits one storage item.
 * - An annotationId names one recording in an organization. Re-adding it in the same document replaces the
 *   recording (fields not given are removed) and keeps its creation time; re-adding it in another document is a
 *   per-item `success:false` (moving recordings is document migration's job).
 * - The organization and the document are created when missing (recordings come from a client that is already
 *   in the document).
 * - Get returns recordings in creation order (recordings of one request in request order); `recordingIds` keeps
 *   the named ones (ids not found are left out), within `documentId` when given.
 * - A page also ends early, with a token, before its JSON would pass 5 MB (Lambda answers at most 6 MB).
 */
import * as z from 'zod/mini';
import { pageTokenAfter, readPageAfter } from '../crypto/page-token';
import { newId } from '../crypto/tokens';
import { ensureOrganizationItem, getDocument, organizationExists, upsertDocumentItem } from '../db/organization';
import {
  getRecordings,
  putRecordingItem,
  queryRecordings,
  type RecordingContent,
  type RecordingRecord,
} from '../db/recording';
import { TransactionCancelledError, type TransactItem } from '../db/transact';
import type { BatchResult, ItemResult } from '../http/batch-result';
import { clientId, httpUrl } from '../http/schemas';
import { assertDocumentsWritable, documentsIn, transactGuarded } from './document-locks';

const MAX_RECORDING_BYTES = 256 * 1024;
const MAX_PAGE_BYTES = 5 * 1024 * 1024;
const DEFAULT_TYPE = 'recorder';

const text = (max: number) => z.string().check(z.maxLength(max, `Must be at most ${max} characters.`));

/**
 * A number that survives storage: at most 2^53 - 1 in magnitude (the DynamoDB client refuses larger ones, as
 * imprecise) and, unless 0, at least 1e-100 (DynamoDB's own range ends at 1e-130). Outside this range the write
 * would fail after validation, as a 500.
 */
const storableNumber = () =>
  z.number().check(
    z.refine(
      (n) => Math.abs(n) <= Number.MAX_SAFE_INTEGER && (n === 0 || Math.abs(n) >= 1e-100),
      'Must be 0 or between 1e-100 and 9007199254740991 in size.',
    ),
  );
const nonNegative = () => storableNumber().check(z.minimum(0, 'Must not be negative.'));

const attachmentSchema = () =>
  z.object({
    attachmentId: z.optional(storableNumber()),
    url: httpUrl(2048),
    mimeType: z.optional(text(255)),
    name: z.optional(text(1000)),
    type: z.optional(text(255)),
    size: z.optional(nonNegative()),
  });

type AttachmentInput = z.output<ReturnType<typeof attachmentSchema>>;

/** A recording annotation as Add Recordings accepts it; `metadata` and unknown fields are stripped. */
export const recordingSchema = () =>
  z.object({
    annotationId: z.optional(clientId()),
    type: z.optional(text(255)),
    recordingType: z.optional(text(255)),
    mode: z.optional(text(255)),
    recordedTime: z.optional(z.object({ duration: z.optional(nonNegative()), display: z.optional(text(64)) })),
    displayName: z.optional(text(1000)),
    attachments: z.optional(
      z.array(attachmentSchema()).check(
        z.maxLength(100, 'Must have at most 100 items.'),
        z.refine(
          (items: AttachmentInput[]) => {
            const ids = items.flatMap((item) => (item.attachmentId === undefined ? [] : [item.attachmentId]));
            return new Set(ids).size === ids.length;
          },
          'Must not repeat an attachmentId.',
        ),
      ),
    ),
    latestVersion: z.optional(storableNumber()),
  }).check(
    z.refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_RECORDING_BYTES, 'Must be at most 256 KB as JSON.'),
  );

export type RecordingInput = z.output<ReturnType<typeof recordingSchema>>;

/** Refuses two recordings of one request with the same annotationId (recordings without one get new ids). */
export const noDuplicateAnnotationIds = () =>
  z.refine<RecordingInput[]>((items) => {
    const ids = items.flatMap((item) => (item.annotationId === undefined ? [] : [item.annotationId]));
    return new Set(ids).size === ids.length;
  }, 'Must not repeat an annotationId.');

/** The stored content fields of an input: never ids, metadata or server fields. */
const contentOf = (input: RecordingInput): RecordingContent => ({
  type: input.type ?? DEFAULT_TYPE,
  recordingType: input.recordingType,
  mode: input.mode,
  recordedTime: input.recordedTime,
  displayName: input.displayName,
  attachments: input.attachments,
  latestVersion: input.latestVersion,
});

const OUTCOME_RESULTS = {
  added: { success: true, message: 'Recording added.' },
  replaced: { success: true, message: 'Recording updated.' },
  inAnotherDocument: { success: false, message: 'Recording belongs to another document.' },
} as const satisfies Record<string, ItemResult>;

type Outcome = keyof typeof OUTCOME_RESULTS;

/**
 * Adds (or replaces, idempotently) recordings of a document, creating the organization and the document when
 * missing. Each recording is one transaction with the document's migration-lock check, so one that names a
 * recording of another document fails alone. A storage error after some writes leaves those written; retrying
 * the request completes it. Throws FailedPreconditionError when the document is being migrated.
 */
export async function addRecordings(
  apiKeyId: string,
  input: { organizationId: string; documentId: string; recordings: RecordingInput[] },
  now = Date.now(),
): Promise<BatchResult> {
  const { organizationId, documentId } = input;
  const guarded = documentsIn(organizationId, [documentId]);
  const withIds = input.recordings.map((recording) => ({ recording, annotationId: recording.annotationId ?? newId('rec_') }));
  const [organization, document, stored] = await Promise.all([
    organizationExists(apiKeyId, organizationId),
    getDocument(apiKeyId, organizationId, documentId),
    // Which recordings exist already tells an add from a replace (a transaction returns no old values).
    getRecordings(apiKeyId, organizationId, withIds.map(({ annotationId }) => annotationId)),
    assertDocumentsWritable(apiKeyId, guarded),
  ]);
  // Only what is missing is written: an existing document's updatedAt is not touched by adding recordings.
  const structure: TransactItem[] = [];
  if (!organization) structure.push(ensureOrganizationItem(apiKeyId, organizationId, now));
  if (!document) structure.push(upsertDocumentItem(apiKeyId, organizationId, documentId, {}, now));
  if (structure.length > 0) await transactGuarded(apiKeyId, structure, guarded);

  const existing = new Set(stored.map((recording) => recording.annotationId));
  const outcomes = await Promise.all(
    withIds.map(async ({ recording, annotationId }, index): Promise<Outcome> => {
      const item = putRecordingItem(apiKeyId, organizationId, documentId, annotationId, contentOf(recording), { now, index });
      try {
        await transactGuarded(apiKeyId, [item], guarded);
        return existing.has(annotationId) ? 'replaced' : 'added';
      } catch (error) {
        if (error instanceof TransactionCancelledError && error.failed(0)) return 'inAnotherDocument';
        throw error;
      }
    }),
  );
  const result: BatchResult = {};
  withIds.forEach(({ annotationId }, i) => {
    result[annotationId] = { ...OUTCOME_RESULTS[outcomes[i]] };
  });
  return result;
}

/** A recording annotation as the API shows it: the spec's fields in its order, metadata from the server. */
export function presentRecording(apiKeyId: string, r: RecordingRecord) {
  return {
    type: r.type,
    recordingType: r.recordingType,
    mode: r.mode,
    metadata: { apiKey: apiKeyId, organizationId: r.organizationId, documentId: r.documentId },
    recordedTime: r.recordedTime,
    displayName: r.displayName,
    annotationId: r.annotationId,
    attachments: r.attachments,
    latestVersion: r.latestVersion,
  };
}

export interface GetRecordingsInput {
  organizationId: string;
  documentId?: string;
  recordingIds?: string[];
  pageSize: number;
  pageToken?: string;
}

/**
 * Cuts `candidates` (in order) to a page: at most `pageSize` items, and fewer when the next one would take the
 * page past MAX_PAGE_BYTES (always at least one, which is at most 256 KB). `more` says whether any were left.
 */
function fillPage(apiKeyId: string, candidates: readonly RecordingRecord[], pageSize: number, more: boolean) {
  const page: RecordingRecord[] = [];
  const shown: Array<ReturnType<typeof presentRecording>> = [];
  let bytes = 2;
  for (const recording of candidates.slice(0, pageSize)) {
    const view = presentRecording(apiKeyId, recording);
    bytes += Buffer.byteLength(JSON.stringify(view)) + 1;
    if (page.length > 0 && bytes > MAX_PAGE_BYTES) break;
    page.push(recording);
    shown.push(view);
  }
  const left = page.length < candidates.length || more;
  return { shown, last: left ? page[page.length - 1] : undefined };
}

/**
 * One page of recordings of the organization or of a document, or of the named ones, in creation order.
 * Throws InvalidArgumentError for a page token of another tenant or query, tampered or expired.
 */
export async function listRecordings(apiKeyId: string, input: GetRecordingsInput) {
  const { pageToken, pageSize, ...query } = input;
  const scope = {
    tenant: apiKeyId,
    query: { operation: 'recordings/get', ...query, recordingIds: query.recordingIds ? [...query.recordingIds].sort() : undefined },
  };
  const after = await readPageAfter(pageToken, scope);

  let candidates: RecordingRecord[];
  let more = false;
  if (input.recordingIds !== undefined) {
    const found = await getRecordings(apiKeyId, input.organizationId, input.recordingIds, { consistent: false });
    candidates = found
      .filter((r) => input.documentId === undefined || r.documentId === input.documentId)
      .filter((r) => after === undefined || r.position > after)
      .sort((a, b) => (a.position < b.position ? -1 : 1));
  } else {
    const page = await queryRecordings(apiKeyId, input.organizationId, { documentId: input.documentId, limit: pageSize, after });
    candidates = page.items;
    more = page.after !== undefined;
  }
  const { shown, last } = fillPage(apiKeyId, candidates, pageSize, more);
  return {
    recordings: shown,
    pageToken: await pageTokenAfter(scope, last?.position),
  };
}
