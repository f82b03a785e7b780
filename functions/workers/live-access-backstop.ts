/**
 * The live access backstop (`liveAccessBackstopWorker` in shared/workers.ts), run every minute by an EventBridge
 * rule in AWS and on an interval by the local stack: one pass over the connections due for an access check
 * (shared/domain/live/revocation.ts). A failed connection stays due and the next run tries it again.
 */
import { logger, withLogContext } from '../../shared/core/logger';
import { recheckDueConnections, type RecheckOutcome } from '../../shared/domain/live/revocation';
import { liveAccessBackstopWorker } from '../../shared/workers';

export const handler = (): Promise<RecheckOutcome> =>
  withLogContext({ worker: liveAccessBackstopWorker.id }, async () => {
    const outcome = await recheckDueConnections();
    if (outcome.checked > 0) logger.info('Live access backstop pass.', { ...outcome });
    return outcome;
  });
