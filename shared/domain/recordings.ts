/**
 * Recording annotations (docs/api-spec.md "Recording annotation" and "Recordings", docs/decisions.md §8 and §10): add (ext) and
 * get. The field rules are the schema of Add Recordings (functions/recordings/add.ts); the stored shape is
 * RecordingContent (shared/db/recording.ts).
 *
 * Rules where the contract is silent (also in docs/project-decisions.md):
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
import { pageTokenAfter, readPageAfter } from '../db/page-token';
import { newId } from '../crypto/tokens';
import { ensureOrganizationItem, getDocument, organizationExists, upsertDocumentItem } from '../db/organization';
import {
  getRecordings,
  RecordingInAnotherDocument,
  putRecordingItem,
  queryRecordings,
  type RecordingContent,
  type RecordingRecord,
} from '../db/recording';
import type { TransactItem } from '../db/transact';
import { batchResult, notWritten, settleEach, type BatchResult, type ItemResult } from './batch-result';
import { assertDocumentsWritable, documentsIn, transactGuarded } from './document-locks';

const MAX_PAGE_BYTES = 5 * 1024 * 1024;
const DEFAULT_TYPE = 'recorder';

/** A recording as Add Recordings accepts it (its schema is in functions/recordings/add.ts): content and an optional id. */
export interface RecordingInput extends RecordingContent {
  annotationId?: string;
}

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

/**
 * Adds (or replaces, idempotently) recordings of a document, creating the organization and the document when
 * missing. Each recording is one transaction with the document's migration-lock check, so one that names a
 * recording of another document fails alone. The organization and document are created in the transaction of
 * the first recording written, so a request that writes no recording creates neither. A storage error after some
 * writes answers those recordings success and the others not written. Throws FailedPreconditionError when the
 * document is being migrated.
 */
export async function addRecordings(
  apiKeyId: string,
  input: { organizationId: string; documentId: string; recordings: RecordingInput[] },
  now = Date.now(),
): Promise<BatchResult> {
  const { organizationId, documentId } = input;
  const guarded = documentsIn(organizationId, [documentId]);
  const withIds = input.recordings.map((recording, index) => ({
    recording,
    index,
    annotationId: recording.annotationId ?? newId('rec_'),
  }));
  const [organization, document, stored] = await Promise.all([
    organizationExists(apiKeyId, organizationId),
    getDocument(apiKeyId, organizationId, documentId),
    // Which recordings exist already tells an add from a replace (a transaction returns no old values).
    getRecordings(
      apiKeyId,
      organizationId,
      withIds.map(({ annotationId }) => annotationId),
    ),
    assertDocumentsWritable(apiKeyId, guarded),
  ]);
  // Only what is missing is written: an existing document's updatedAt is not touched by adding recordings.
  const structure: TransactItem[] = [];
  if (!organization) structure.push(ensureOrganizationItem(apiKeyId, organizationId, now));
  if (!document) structure.push(upsertDocumentItem(apiKeyId, organizationId, documentId, {}, now));

  const existing = new Set(stored.map((recording) => recording.annotationId));
  const write = async (
    { recording, annotationId, index }: (typeof withIds)[number],
    withStructure: readonly TransactItem[] = [],
  ): Promise<ItemResult> => {
    const item = putRecordingItem(apiKeyId, organizationId, documentId, annotationId, contentOf(recording), {
      now,
      index,
    });
    try {
      await transactGuarded(apiKeyId, [...withStructure, item], guarded);
      return { ...OUTCOME_RESULTS[existing.has(annotationId) ? 'replaced' : 'added'] };
    } catch (error) {
      if (error instanceof RecordingInAnotherDocument) return { ...OUTCOME_RESULTS.inAnotherDocument };
      throw error;
    }
  };
  const result: BatchResult = {};
  const written = () => Object.values(result).some((r) => r.success);
  let next = 0;
  // One at a time until a recording is written with the structure (an error before that means nothing was
  // written), then the rest at once.
  while (structure.length > 0 && next < withIds.length && !written()) {
    result[withIds[next].annotationId] = await write(withIds[next], structure);
    next += 1;
  }
  const rest = withIds.slice(next);
  Object.assign(
    result,
    await settleEach(
      rest,
      (entry) => entry.annotationId,
      (entry) => write(entry),
    ).catch((error: unknown) => {
      if (!written()) throw error;
      return batchResult(
        rest,
        (entry) => entry.annotationId,
        () => notWritten(error),
      );
    }),
  );
  return batchResult(
    withIds,
    (entry) => entry.annotationId,
    (entry) => result[entry.annotationId],
  );
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
    query: {
      operation: 'recordings/get',
      ...query,
      recordingIds: query.recordingIds ? [...query.recordingIds].sort() : undefined,
    },
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
    const page = await queryRecordings(apiKeyId, input.organizationId, {
      documentId: input.documentId,
      limit: pageSize,
      after,
    });
    candidates = page.items;
    more = page.after !== undefined;
  }
  const { shown, last } = fillPage(apiKeyId, candidates, pageSize, more);
  return {
    recordings: shown,
    pageToken: await pageTokenAfter(scope, last?.position),
  };
}
