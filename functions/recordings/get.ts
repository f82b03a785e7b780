import * as z from 'zod/mini';
import { listRecordings } from '../../shared/domain/recordings';
import { operation } from '../../shared/http/operation';
import { clientId, nonEmptyUniqueIds, pageSize, pageToken } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  recordingIds: z.optional(nonEmptyUniqueIds('a recordingId')),
  pageSize: z.optional(pageSize()),
  pageToken: z.optional(pageToken()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    // decisions §8: Get Recordings pages of 100 by default.
    const page = await listRecordings(caller.apiKeyId, { ...data, pageSize: data.pageSize ?? 100 });
    return { message: 'Recordings retrieved successfully.', data: page.recordings, pageToken: page.pageToken };
  },
});
