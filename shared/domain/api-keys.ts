/** Listing a workspace's API keys, with signed pagination (no encryption: this module stays out of crypto). */
import { pageTokenAfter, readPageAfter } from '../db/page-token';
import { getApiKeys, listApiKeys, type ApiKey } from '../db/api-key';
import { namedPage } from '../db/query';

export interface ApiKeyListing {
  apiKeys: ApiKey[];
  nextPageToken?: string;
}

/**
 * One page of the workspace's keys in creation order, optionally only the keys named in `apiKeyIds` (unknown
 * ids are skipped; pages stay full). Reads at most a page and one item more. Throws InvalidArgumentError for a
 * page token of another workspace or query.
 */
export async function listWorkspaceApiKeys(
  workspaceId: string,
  options: { apiKeyIds?: readonly string[]; pageSize: number; pageToken?: string },
): Promise<ApiKeyListing> {
  const filter = options.apiKeyIds === undefined ? undefined : [...new Set(options.apiKeyIds)].sort();
  const scope = { tenant: workspaceId, query: { operation: 'workspace/apikeys/get', apiKeys: filter ?? null } };
  const after = await readPageAfter(options.pageToken, scope);
  const page =
    filter === undefined
      ? await listApiKeys(workspaceId, options.pageSize, after)
      : await namedPage(filter, (ids) => getApiKeys(workspaceId, ids), {
          size: options.pageSize,
          after,
          keyOf: (apiKey) => apiKey.id,
        });
  return { apiKeys: page.items, nextPageToken: await pageTokenAfter(scope, page.after) };
}
