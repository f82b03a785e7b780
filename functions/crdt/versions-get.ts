import * as z from 'zod/mini';
import { DEFAULT_VERSION_PAGE_SIZE, listEditorVersions } from '../../shared/domain/crdt/versions';
import { operation } from '../../shared/http/operation';
import { pageWithPageToken } from '../../shared/http/results';
import { clientId, pageSize, pageToken, versionResult } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: clientId(),
  pageSize: pageSize(100, DEFAULT_VERSION_PAGE_SIZE),
  pageToken: z.optional(pageToken()),
});

/** The editor's versions, newest first; the next page's token in `pageToken`. */
export const result = pageWithPageToken(versionResult);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    const page = await listEditorVersions(caller.apiKeyId, data);
    return { message: 'Versions retrieved successfully.', data: page.versions, pageToken: page.pageToken };
  },
});
