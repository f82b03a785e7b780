/**
 * Automatic versions of editors (`crdtAutoVersionsWorker` in shared/workers.ts), run every minute by an EventBridge
 * rule in AWS and on an interval by the local stack: one pass over the editors whose version check is due
 * (shared/domain/crdt/auto-versions.ts). A failed check stays due.
 */
import { logger, withLogContext } from '../../shared/core/logger';
import { keepDueVersions } from '../../shared/domain/crdt/auto-versions';
import { crdtAutoVersionsWorker } from '../../shared/workers';

export const handler = () =>
  withLogContext({ worker: crdtAutoVersionsWorker.id }, async () => {
    const outcome = await keepDueVersions();
    if (outcome.kept + outcome.moved + outcome.cleared + outcome.failed > 0)
      logger.info('Automatic versions pass.', { ...outcome });
    return outcome;
  });
