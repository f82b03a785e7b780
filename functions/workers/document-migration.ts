/**
 * The document migration reader and its one consumer (shared/domain/migration.ts), on a stream reader of its own
 * (`documentMigrationWorker` in shared/workers.ts): a run can take many minutes, and holds up no other consumer's
 * changes. Each change names a migration to run or resume; a run that fails is reported back so the stream hands it
 * again, until the migration gives up.
 */
import { migrationFromItem } from '../../shared/db/migration';
import type { ItemChange } from '../../shared/db/item-change';
import { recordRunFailure, runMigration } from '../../shared/domain/migration';
import { documentMigrationWorker } from '../../shared/workers';
import { streamHandler, type Consume, type ConsumersOf } from '../../shared/domain/stream/dispatch';

/** Time left for the next invocation to save its place and hand off (the checkpoint and one more page). */
const HAND_OFF_MARGIN_MS = 60_000;

export const consume: Consume = async (changes, context) => {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - HAND_OFF_MARGIN_MS;
  const failed: ItemChange[] = [];
  for (const change of changes) {
    // The reader hands only migrations pending or in progress (its declared interest).
    const migration = migrationFromItem(change.newImage);
    if (migration === undefined) continue;
    try {
      await runMigration(migration, { deadline });
    } catch (error) {
      if ((await recordRunFailure(migration, error)) === 'retry') failed.push(change);
    }
  }
  return failed;
};

export const consumers: ConsumersOf<typeof documentMigrationWorker> = { DocumentMigration: consume };

export const handler = streamHandler(documentMigrationWorker, consumers);
