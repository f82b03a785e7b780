import * as z from 'zod/mini';
import { listRecordings } from '../../shared/domain/recordings';
import { operation } from '../../shared/http/operation';
import { clientId, nonEmptyUniqueIds, pageSize, pageToken } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  recordingIds: z.optional(nonEmptyUniqueIds('a recordingId')),
  // docs/decisions.md §8: Get Recordings pages of 100 by default.
  pageSize: pageSize(1000, 100),
  pageToken: z.optional(pageToken()),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const page = await listRecordings(caller.apiKeyId, data);
    return { message: 'Recordings retrieved successfully.', data: page.recordings, pageToken: page.pageToken };
  },
});
