import * as z from 'zod/mini';
import { addRecordings } from '../../shared/domain/recordings';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import { clientId, httpUrl, listOf, maybeEmptyText, noDuplicateIds } from '../../shared/http/schemas';

const MAX_RECORDING_BYTES = 256 * 1024;

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

const attachment = z.object({
  attachmentId: z.optional(storableNumber()),
  url: httpUrl(2048),
  mimeType: z.optional(maybeEmptyText(255)),
  name: z.optional(maybeEmptyText(1000)),
  type: z.optional(maybeEmptyText(255)),
  size: z.optional(nonNegative()),
});

/** A recording annotation as Add Recordings accepts it; `metadata` and unknown fields are stripped. */
const recording = z.object({
  annotationId: z.optional(clientId()),
  type: z.optional(maybeEmptyText(255)),
  recordingType: z.optional(maybeEmptyText(255)),
  mode: z.optional(maybeEmptyText(255)),
  recordedTime: z.optional(z.object({ duration: z.optional(nonNegative()), display: z.optional(maybeEmptyText(64)) })),
  displayName: z.optional(maybeEmptyText(1000)),
  attachments: z.optional(listOf(attachment).check(noDuplicateIds((item: { attachmentId?: number }) => item.attachmentId, 'an attachmentId'))),
  latestVersion: z.optional(storableNumber()),
}).check(
  z.refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_RECORDING_BYTES, 'Must be at most 256 KB as JSON.'),
);

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  // Recordings without an annotationId get new ids, so only the ids given can repeat.
  recordings: listOf(recording).check(
    z.minLength(1, 'Must have at least 1 item.'),
    noDuplicateIds((item: { annotationId?: string }) => item.annotationId, 'an annotationId'),
  ),
});

/** Keyed by annotationId: added, updated, in another document, or not written (docs/decisions.md §10). */
export const result = batchOf(itemResult({}));

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const result = await addRecordings(caller.apiKeyId, data);
    return { message: 'Recordings added successfully.', data: result };
  },
});
