/**
 * The live-revocation consumer (shared/domain/live/revocation.ts): handed each change that may take access away
 * (the interests of `liveRevocationConsumer` in shared/workers.ts) by the changes reader
 * (functions/workers/stream-changes.ts), it re-checks the open live connections each change concerns, so a REST
 * change that removes or lowers access reaches a silent connection within seconds, not when it next speaks.
 * The changes of a batch that concern the same connections (a user removed deletes all their entries) re-check them
 * once. A scope that fails is handed again (its changes only); re-checking twice is harmless.
 */
import { logger } from '../../core/logger';
import type { ItemChange } from '../../db/item-change';
import { accessScopeOf, recheckScope, scopeKey, type AccessScope } from '../live/revocation';
import { liveRevocationConsumer } from '../../workers';
import { consumerHandler, type Consume } from './dispatch';

export const consume: Consume = async (changes) => {
  const scopes = new Map<string, { scope: AccessScope; changes: ItemChange[] }>();
  for (const change of changes) {
    const scope = accessScopeOf(change);
    if (scope === undefined) continue;
    const key = scopeKey(scope);
    const entry = scopes.get(key) ?? { scope, changes: [] };
    entry.changes.push(change);
    scopes.set(key, entry);
  }
  const failed: ItemChange[] = [];
  await Promise.all(
    [...scopes.values()].map(async ({ scope, changes: concerned }) => {
      try {
        await recheckScope(scope);
      } catch (error) {
        logger.error('Live connections not re-checked after an access change; the stream will retry.', { error });
        failed.push(...concerned);
      }
    }),
  );
  return failed;
};

/** The live-revocation consumer alone, as a stream handler (tests). */
export const handler = consumerHandler(liveRevocationConsumer, consume);
