import * as z from 'zod/mini';
import { listRecordings } from '../../shared/domain/recordings';
import { operation } from '../../shared/http/operation';
import { pageWithPageToken } from '../../shared/http/results';
import { clientId, nonEmptyUniqueIds, pageSize, pageToken } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  recordingIds: z.optional(nonEmptyUniqueIds('a recordingId')),
  // docs/decisions.md §8: Get Recordings pages of 100 by default.
  pageSize: pageSize(1000, 100),
  pageToken: z.optional(pageToken()),
});

/** A recording annotation as presentRecording shows it (docs/api-spec.md "Recording annotation"). */
const recording = z.object({
  type: z.string(),
  recordingType: z.optional(z.string()),
  mode: z.optional(z.string()),
  metadata: z.object({ apiKey: z.string(), organizationId: z.string(), documentId: z.string() }),
  recordedTime: z.optional(z.object({ duration: z.optional(z.number()), display: z.optional(z.string()) })),
  displayName: z.optional(z.string()),
  annotationId: z.string(),
  attachments: z.optional(
    z.array(
      z.object({
        attachmentId: z.optional(z.number()),
        url: z.string(),
        mimeType: z.optional(z.string()),
        name: z.optional(z.string()),
        type: z.optional(z.string()),
        size: z.optional(z.number()),
      }),
    ),
  ),
  latestVersion: z.optional(z.number()),
});

export const result = pageWithPageToken(recording);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listRecordings(caller.apiKeyId, data);
    return { message: 'Recordings retrieved successfully.', data: page.recordings, pageToken: page.pageToken };
  },
});
