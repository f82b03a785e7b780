import * as z from 'zod/mini';
import { addRecordings } from '../../shared/domain/recordings';
import { operation } from '../../shared/http/operation';
import { batchOf, itemResult } from '../../shared/http/results';
import {
  clientId,
  documentedRules,
  httpUrl,
  maybeEmptyText,
  storableNumber,
  uniqueListOf,
} from '../../shared/http/schemas';

const MAX_RECORDING_BYTES = 256 * 1024;

const nonNegative = () =>
  documentedRules(storableNumber().check(z.minimum(0, 'Must not be negative.')), { minimum: 0 });

const attachment = z.object({
  attachmentId: z.optional(storableNumber()),
  url: httpUrl(2048),
  mimeType: z.optional(maybeEmptyText(255)),
  name: z.optional(maybeEmptyText(1000)),
  type: z.optional(maybeEmptyText(255)),
  size: z.optional(nonNegative()),
});

/** A recording annotation as Add Recordings accepts it; `metadata` and unknown fields are stripped. */
const recording = z
  .object({
    annotationId: z.optional(clientId()),
    type: z.optional(maybeEmptyText(255)),
    recordingType: z.optional(maybeEmptyText(255)),
    mode: z.optional(maybeEmptyText(255)),
    recordedTime: z.optional(
      z.object({ duration: z.optional(nonNegative()), display: z.optional(maybeEmptyText(64)) }),
    ),
    displayName: z.optional(maybeEmptyText(1000)),
    attachments: z.optional(uniqueListOf(attachment, 'attachmentId', 'an attachmentId')),
    latestVersion: z.optional(storableNumber()),
  })
  .check(
    z.refine(
      (value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_RECORDING_BYTES,
      'Must be at most 256 KB as JSON.',
    ),
  );

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  // Recordings without an annotationId get new ids, so only the ids given can repeat.
  recordings: uniqueListOf(recording, 'annotationId', 'an annotationId', { min: 1 }),
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
