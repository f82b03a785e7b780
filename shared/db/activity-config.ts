/**
 * The activity service configuration of a tenant (one item).
 *
 *   pk T#<apiKeyId>   sk CONFIG#ACTIVITY   config, version
 */
import { versionedConfig, type Versioned } from './versioned-item';

export interface ActivityServiceConfig {
  isEnabled?: boolean;
  enabledTime?: number;
  immutable?: boolean;
  triggers?: { comment?: Record<string, boolean> };
}

export type StoredActivityConfig = Versioned<ActivityServiceConfig>;

const store = versionedConfig<ActivityServiceConfig>('ACTIVITY');

export const getActivityConfig = (apiKeyId: string) => store.get(apiKeyId);

/**
 * Stores `config` if the stored version is still `expectedVersion` (0: nothing stored); false when another
 * writer changed it in between.
 */
export const putActivityConfig = (apiKeyId: string, config: ActivityServiceConfig, expectedVersion: number) =>
  store.put(apiKeyId, config, expectedVersion);
