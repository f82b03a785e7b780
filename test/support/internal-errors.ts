/**
 * connected tier: the cause of every INTERNAL answer is printed, whatever the log level. The tests run with logging
 * off, and an INTERNAL answer says only "Internal error." (its cause is logged, never returned), so without this a
 * 500 seen once on a busy machine would leave nothing to go on.
 */
import { logger } from '../../shared/core/logger';

const logError = logger.error;

logger.error = (message, ...extra) => {
  if (message === 'unhandled error')
    process.stderr.write(`An answer of INTERNAL; its cause, as the service logged it: ${describe(extra[0])}\n`);
  logError(message, ...extra);
};

/** The error's name, message and where it was thrown (the first frames): enough to find it, short in a long run. */
function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  return (cause.stack ?? `${cause.name}: ${cause.message}`).split('\n').slice(0, 6).join('\n');
}
