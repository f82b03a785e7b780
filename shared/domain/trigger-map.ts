/**
 * The write of a trigger map when a request sends triggers (the activity config's `triggers.comment`, the email
 * config's `emailServiceConfig.triggers`): planned the same way for both by shared/domain/activity-config.ts and
 * shared/domain/email-config.ts. Seeding the default triggers stays with each config (what it seeds differs).
 */
import type { ConfigCondition, ConfigPath, ConfigSet } from '../db/versioned-item';

/**
 * The sets, and the conditions pinning what the plan read, that merge the `sent` triggers (undefined: the request
 * sends none) into the map at `path`, which the read found as `stored` (undefined: no map stored):
 * - no map stored: the sent map, whole, while still none is stored (and while `parent`, when given, exists);
 * - a map stored and triggers sent: one path per trigger. The map may have grown since the read; the limit must
 *   hold for what it holds now, so a write that adds triggers applies only while the map has room for them under
 *   `limit`.
 */
export function planTriggerMap(
  path: ConfigPath,
  stored: Record<string, boolean> | undefined,
  sent: Record<string, boolean> | undefined,
  limit: number,
  parent?: ConfigPath,
): { set: ConfigSet[]; conditions: ConfigCondition[] } {
  if (sent === undefined) return { set: [], conditions: [] };
  if (stored === undefined) {
    return {
      set: [{ path, value: { ...sent } }],
      conditions: [...(parent === undefined ? [] : [{ exists: parent }]), { absent: path }],
    };
  }
  if (Object.keys(sent).length === 0) return { set: [], conditions: [] };
  const added = Object.keys(sent).filter((trigger) => !Object.hasOwn(stored, trigger)).length;
  const conditions: ConfigCondition[] = [{ exists: path }];
  if (added > 0) conditions.push({ atMost: path, entries: limit - added });
  return { set: Object.entries(sent).map(([trigger, on]) => ({ path: [...path, trigger], value: on })), conditions };
}
