/**
 * Activity service configuration rules (docs/api-spec.md "Update Activity Config" rules 1–4, docs/decisions.md §7): deep merge
 * over the stored value, default seeding on first enable, `isEnabled` always present.
 *
 * An update is written as an atomic UpdateItem of the fields and triggers it sends (shared/db/versioned-item.ts),
 * so concurrent updates of different triggers or fields all apply, and of the same one the last writer wins.
 */
import { getActivityConfig, writeActivityConfig, type ActivityServiceConfig } from '../db/activity-config';
import type { ConfigCondition, ConfigSet, ConfigWrite } from '../db/versioned-item';
import { invalidFields } from '../core/errors';
import { withoutUndefined } from '../core/objects';
import { planTriggerMap } from './trigger-map';

/** The standard comment triggers (docs/decisions.md §7); seeding turns every one on. */
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

/** The config as responses show it: `isEnabled` always present (docs/api-spec.md "Activity service config"). */
export type ActivityConfigView = ActivityServiceConfig & { isEnabled: boolean };

/** What a response shows: the stored config with `isEnabled` always present. */
export function presentActivityConfig(config: ActivityServiceConfig | undefined): ActivityConfigView {
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

/** Triggers that may build up over many updates: keeps the one config item far below DynamoDB's 400 KB. */
export const MAX_STORED_TRIGGERS = 500;

const TRIGGERS = ['triggers'];
const COMMENT_TRIGGERS = ['triggers', 'comment'];
const FIELDS = ['isEnabled', 'enabledTime', 'immutable'] as const;

/**
 * The write that applies `update` to `stored` (undefined: nothing stored) at time `now`, with the same result as
 * mergeActivityConfig but touching only what the update changes, so that it commutes with concurrent updates of
 * other fields and triggers. Its conditions pin what the plan read: whether triggers are stored (seeding, or
 * creating the trigger map), and how many (the limit). Throws InvalidArgumentError when the merged triggers would
 * exceed MAX_STORED_TRIGGERS (triggers are never removed, so a later read cannot lower the count).
 */
export function planActivityUpdate(
  stored: ActivityServiceConfig | undefined,
  update: ActivityServiceConfig,
  now: number,
): ConfigWrite<ActivityServiceConfig> {
  const merged = mergeActivityConfig(stored, update, now);
  if (Object.keys(merged.triggers?.comment ?? {}).length > MAX_STORED_TRIGGERS) {
    throw invalidFields([
      {
        path: 'data.activityServiceConfig.triggers.comment',
        message: `The configuration may hold at most ${MAX_STORED_TRIGGERS} triggers.`,
      },
    ]);
  }
  if (stored === undefined) return { create: merged };

  const set: ConfigSet[] = FIELDS.flatMap((field) =>
    update[field] === undefined ? [] : [{ path: [field], value: update[field] }],
  );
  const conditions: ConfigCondition[] = [];
  if (stored.triggers === undefined && (update.isEnabled === true || update.triggers !== undefined)) {
    // Seeding, or the first triggers: the whole map, computed by the merge, while still no triggers are stored.
    conditions.push({ absent: TRIGGERS });
    set.push({ path: TRIGGERS, value: merged.triggers });
  } else {
    // The comment triggers sent (none: nothing to write), into the stored comment map or as a new one.
    const sent = update.triggers === undefined ? undefined : (update.triggers.comment ?? {});
    const triggers = planTriggerMap(COMMENT_TRIGGERS, stored.triggers?.comment, sent, MAX_STORED_TRIGGERS, TRIGGERS);
    conditions.push(...triggers.conditions);
    set.push(...triggers.set);
  }
  // Defaults the merge filled in from `now` (seeding's immutable, the first enabledTime) apply only while nothing
  // is stored there, so a concurrent update that set them first keeps its value.
  if (update.immutable === undefined && stored.immutable === undefined && merged.immutable !== undefined) {
    set.push({ path: ['immutable'], value: merged.immutable, ifAbsent: true });
  }
  if (update.enabledTime === undefined && stored.enabledTime === undefined && merged.enabledTime !== undefined) {
    set.push({ path: ['enabledTime'], value: merged.enabledTime, ifAbsent: true });
  }
  return { update: { set, remove: [], conditions } };
}

/**
 * Applies `update` to the tenant's config and returns the config as stored after it. Concurrent updates all
 * apply. Throws InvalidArgumentError when the merged triggers would exceed MAX_STORED_TRIGGERS.
 */
export async function updateActivityConfig(
  apiKeyId: string,
  update: ActivityServiceConfig,
): Promise<ActivityConfigView> {
  const now = Date.now();
  return presentActivityConfig(
    await writeActivityConfig(apiKeyId, (stored) => planActivityUpdate(stored, update, now)),
  );
}

export async function readActivityConfig(apiKeyId: string): Promise<ActivityConfigView> {
  return presentActivityConfig((await getActivityConfig(apiKeyId))?.config);
}
