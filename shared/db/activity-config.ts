/**
 * The activity service configuration of a tenant (one item).
 *
 *   pk T#<apiKeyId>   sk CONFIG#ACTIVITY   config, version
 */
import { versionedConfig, type ConfigPlanner, type Versioned } from './versioned-item';

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
 * Applies the write `plan` makes from the stored config (see versioned-item.ts) and returns the config as stored
 * after it. Throws what `plan` throws, and AbortedError when the stored shape kept changing under the plans.
 */
export const writeActivityConfig = (apiKeyId: string, plan: ConfigPlanner<ActivityServiceConfig>) =>
  store.write(apiKeyId, plan);
