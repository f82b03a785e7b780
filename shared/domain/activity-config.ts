/**
 * Activity service configuration rules (api-spec "Update Activity Config" rules 1–4, decisions §7): deep merge
 * over the stored value, default seeding on first enable, `isEnabled` always present.
 */
import { getActivityConfig, putActivityConfig, type ActivityServiceConfig } from '../db/activity-config';
import { AbortedError, invalidFields } from '../http/errors';

/** The standard comment triggers (decisions §7); seeding turns every one on. */
export const STANDARD_COMMENT_TRIGGERS = [
  'comment_annotation.add',
  'comment_annotation.delete',
  'comment_annotation.status_change',
  'comment_annotation.priority_change',
  'comment_annotation.assign',
  'comment_annotation.accept',
  'comment_annotation.reject',
  'comment_annotation.suggestion_accept',
  'comment_annotation.suggestion_reject',
  'comment.add',
  'comment.update',
  'comment.delete',
  'comment.reaction_add',
  'comment.reaction_delete',
] as const;

/** What a response shows: the stored config with `isEnabled` always present. */
export function presentActivityConfig(config: ActivityServiceConfig | undefined): ActivityServiceConfig {
  return { ...config, isEnabled: config?.isEnabled ?? false };
}

/**
 * The config after applying `update` to `stored` at time `now`: seeded with the defaults when `update` enables the
 * service and nothing was configured before (no stored triggers), then deep-merged with the stored value and the update.
 */
export function mergeActivityConfig(
  stored: ActivityServiceConfig | undefined,
  update: ActivityServiceConfig,
  now: number,
): ActivityServiceConfig {
  const seeding = update.isEnabled === true && stored?.triggers === undefined;
  const base: ActivityServiceConfig = seeding
    ? {
        ...stored,
        immutable: stored?.immutable ?? true,
        enabledTime: stored?.enabledTime ?? now,
        triggers: { comment: Object.fromEntries(STANDARD_COMMENT_TRIGGERS.map((type) => [type, true])) },
      }
    : { ...stored };
  const merged: ActivityServiceConfig = { ...base, ...withoutUndefined(update) };
  if (base.triggers !== undefined || update.triggers !== undefined) {
    merged.triggers = {
      ...base.triggers,
      ...update.triggers,
      comment: { ...base.triggers?.comment, ...update.triggers?.comment },
    };
  }
  // Enabling stamps the time once, unless the caller gave one; later updates keep it.
  if (merged.isEnabled === true && merged.enabledTime === undefined) merged.enabledTime = now;
  return merged;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const ATTEMPTS = 5;

/** Triggers that may build up over many updates: keeps the one config item far below DynamoDB's 400 KB. */
export const MAX_STORED_TRIGGERS = 500;

/**
 * Applies `update` to the tenant's config and returns the result. Concurrent updates are merged in turn.
 * Throws InvalidArgumentError when the merged triggers would exceed MAX_STORED_TRIGGERS.
 */
export async function updateActivityConfig(apiKeyId: string, update: ActivityServiceConfig): Promise<ActivityServiceConfig> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const stored = await getActivityConfig(apiKeyId);
    const merged = mergeActivityConfig(stored?.config, update, Date.now());
    if (Object.keys(merged.triggers?.comment ?? {}).length > MAX_STORED_TRIGGERS) {
      throw invalidFields([
        { path: 'data.activityServiceConfig.triggers.comment', message: `The configuration may hold at most ${MAX_STORED_TRIGGERS} triggers.` },
      ]);
    }
    if (await putActivityConfig(apiKeyId, merged, stored?.version ?? 0)) return presentActivityConfig(merged);
  }
  throw new AbortedError('The activity configuration changed concurrently; retry.');
}

export async function readActivityConfig(apiKeyId: string): Promise<ActivityServiceConfig> {
  return presentActivityConfig((await getActivityConfig(apiKeyId))?.config);
}
