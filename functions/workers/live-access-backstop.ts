/**
 * The live access backstop (`liveAccessBackstopWorker` in shared/workers.ts), run every minute by an EventBridge
 * rule in AWS and on an interval by the local stack: one pass over the connections due for an access check
 * (shared/domain/live/revocation.ts). The schedule says how often it runs (`periodSeconds`; the AWS rule's rate when
 * absent), which sets how old a check may be for the 60-s bound to hold. A failed connection stays due.
 */
import { logger, withLogContext } from '../../shared/core/logger';
import { backstopMaxAgeMs } from '../../shared/domain/live/access';
import { recheckDueConnections, type RecheckOutcome } from '../../shared/domain/live/revocation';
import { liveAccessBackstopWorker } from '../../shared/workers';

/** What the schedule hands each run. */
export interface BackstopEvent {
  periodSeconds?: number;
}

export const handler = (event: BackstopEvent = {}): Promise<RecheckOutcome> =>
  withLogContext({ worker: liveAccessBackstopWorker.id }, async () => {
    const periodSeconds =
      typeof event.periodSeconds === 'number' && event.periodSeconds > 0
        ? event.periodSeconds
        : liveAccessBackstopWorker.everyMinutes * 60;
    const outcome = await recheckDueConnections(Date.now(), backstopMaxAgeMs(periodSeconds * 1000));
    if (outcome.checked > 0) logger.info('Live access backstop pass.', { ...outcome });
    return outcome;
  });
