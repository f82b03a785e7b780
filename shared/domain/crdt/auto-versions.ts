/**
 * Automatic versions of an editor (decisions §14): an editor that changed since its last version gets one
 * (`kind: "auto"`) once it has been quiet for CRDT_VERSION_QUIET_SECONDS, or once its oldest change not in a version
 * is CRDT_VERSION_MAX_SECONDS old while edits go on; never one of an editor that did not change.
 *
 * Found from the changes already on the table's stream, never by a scan: the changes reader writes the editor's
 * version check when it changes (shared/domain/stream/crdt-versions.ts), and a scheduled worker
 * (functions/workers/crdt-auto-versions.ts) takes the checks that are due (shared/db/crdt-versions.ts). What has
 * changed, and since when, is on the editor's LOG item, which every write updates (shared/db/crdt.ts).
 */
import { config } from '../../core/config';
import { FailedPreconditionError } from '../../core/errors';
import { logger } from '../../core/logger';
import { editorLog, editorUnchangedCheck, getEditor, type EditorLog, type EditorRef } from '../../db/crdt';
import {
  VERSION_CHECK_SHARDS,
  moveVersionCheck,
  scheduleVersionCheck,
  versionCheckDelete,
  versionChecksDue,
  type VersionCheck,
} from '../../db/crdt-versions';
import { transactWrite } from '../../db/transact';
import { keepVersion, keptOf } from './versions';
import { editorState } from './yjs-state';

export interface AutoVersionTimes {
  /** Quiet this long after the last change (ms). */
  quietMs: number;
  /** Or the oldest unversioned change this old (ms). */
  maxMs: number;
}

export const configuredTimes = (): AutoVersionTimes => ({
  quietMs: config.crdtVersionQuietMs,
  maxMs: config.crdtVersionMaxMs,
});

/** When an editor whose LOG item reads `log` is due an automatic version (ms), or undefined when nothing is unversioned. */
export function autoVersionDue(log: EditorLog | undefined, times: AutoVersionTimes): number | undefined {
  if (log?.changedAt === undefined) return undefined;
  if (log.versionedAt !== undefined && log.changedAt <= log.versionedAt) return undefined;
  return Math.min(log.changedAt + times.quietMs, (log.firstChangeAt ?? log.changedAt) + times.maxMs);
}

/** The editor changed at `now`: it gets a version check, due when it will have been quiet long enough. */
export function editorChanged(
  apiKeyId: string,
  ref: EditorRef,
  now: number,
  times = configuredTimes(),
): Promise<boolean> {
  return scheduleVersionCheck(apiKeyId, ref, now + times.quietMs);
}

class ChangedSince extends Error {}

/** Deletes the editor's version check, unless it changed since `changedAt` was read. Returns whether it did. */
async function clearCheck(check: VersionCheck, changedAt: number | undefined): Promise<boolean> {
  try {
    await transactWrite([
      versionCheckDelete(check.apiKeyId, check.ref),
      editorUnchangedCheck(check.apiKeyId, check.ref, changedAt, () => new ChangedSince()),
    ]);
    return true;
  } catch (error) {
    if (error instanceof ChangedSince) return false;
    throw error;
  }
}

export type CheckOutcome = 'kept' | 'moved' | 'cleared';

/** One due check: keep a version, move the check to when it will be due, or clear it (nothing unversioned). */
export async function runCheck(check: VersionCheck, now: number, times: AutoVersionTimes): Promise<CheckOutcome> {
  const { apiKeyId, ref } = check;
  const log = await editorLog(apiKeyId, ref);
  const due = autoVersionDue(log, times);
  if (due === undefined) {
    if (await clearCheck(check, log?.changedAt)) return 'cleared';
    await moveVersionCheck(apiKeyId, ref, now + times.quietMs);
    return 'moved';
  }
  if (due > now) {
    await moveVersionCheck(apiKeyId, ref, due);
    return 'moved';
  }
  const editor = await getEditor(apiKeyId, ref);
  if (editor === undefined) {
    await clearCheck(check, log?.changedAt);
    return 'cleared';
  }
  try {
    await keepVersion(apiKeyId, ref, { kind: 'auto', state: editorState(editor), editor: keptOf(editor) }, now);
  } catch (error) {
    // A document being migrated: its check moved with its partition; this one is looked at again later.
    if (!(error instanceof FailedPreconditionError)) throw error;
    await moveVersionCheck(apiKeyId, ref, now + times.quietMs);
    return 'moved';
  }
  // Edits made since the version was read keep the check, for the next one.
  if (!(await clearCheck(check, log?.changedAt))) await moveVersionCheck(apiKeyId, ref, now + times.quietMs);
  return 'kept';
}

/**
 * One pass of the scheduled worker: every shard's checks due by `now` (at most `perShard` each), one at a time per
 * shard. A check that fails stays due and is tried on the next pass.
 */
export async function keepDueVersions(
  now = Date.now(),
  times = configuredTimes(),
  perShard = 100,
): Promise<Record<CheckOutcome | 'failed', number>> {
  const outcome = { kept: 0, moved: 0, cleared: 0, failed: 0 };
  await Promise.all(
    Array.from({ length: VERSION_CHECK_SHARDS }, async (_, shard) => {
      for (const check of await versionChecksDue(shard, now, perShard)) {
        try {
          outcome[await runCheck(check, now, times)] += 1;
        } catch (error) {
          outcome.failed += 1;
          logger.warn('Automatic version check failed; it stays due.', { error, editorId: check.ref.editorId });
        }
      }
    }),
  );
  return outcome;
}
