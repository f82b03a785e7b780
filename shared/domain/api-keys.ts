/** Listing a workspace's API keys, with signed pagination (no encryption: this module stays out of crypto). */
import { createPageToken, readPageToken } from '../crypto/page-token';
import { getApiKeys, listApiKeys, type ApiKey } from '../db/api-key';

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
  const cursor = options.pageToken === undefined ? undefined : await readPageToken(options.pageToken, scope);
  const after = typeof cursor?.after === 'string' ? cursor.after : undefined;

  let apiKeys: ApiKey[];
  let lastId: string | undefined;
  if (filter === undefined) {
    ({ apiKeys, lastId } = await listApiKeys(workspaceId, options.pageSize, after));
  } else {
    // Fetch the named keys in id order, a page's worth at a time, until the page is full and one more is known.
    const remaining = filter.filter((id) => after === undefined || id > after);
    const found: ApiKey[] = [];
    while (found.length <= options.pageSize && remaining.length > 0) {
      found.push(...(await getApiKeys(workspaceId, remaining.splice(0, options.pageSize + 1 - found.length))));
    }
    apiKeys = found.slice(0, options.pageSize);
    lastId = found.length > options.pageSize ? apiKeys[apiKeys.length - 1]?.id : undefined;
  }
  const nextPageToken = lastId === undefined ? undefined : await createPageToken(scope, { after: lastId });
  return { apiKeys, nextPageToken };
}
