/**
 * The profile-copies consumer (shared/domain/profile-copies.ts): handed each profile written and each membership
 * added (the interests of `profileCopiesConsumer` in shared/workers.ts) by the changes reader
 * (functions/workers/stream-changes.ts), it brings the copies of name, email and initial on the users' memberships
 * in step with their profiles. A batch that fails is handed again whole; writing a copy twice is harmless.
 */
import { logger } from '../../core/logger';
import { copyChangeOf, keepCopiesInStep } from '../profile-copies';
import { profileCopiesConsumer } from '../../workers';
import { consumerHandler, type Consume } from './dispatch';

export const consume: Consume = async (items) => {
  const changes = items.flatMap((item) => {
    const change = copyChangeOf(item);
    return change === undefined ? [] : [change];
  });
  try {
    await keepCopiesInStep(changes);
    return [];
  } catch (error) {
    logger.error('Profile copies not brought in step; the stream will retry the batch.', { error });
    // The whole batch again, from its first record: every change in it is safe to apply twice.
    return items;
  }
};

/** The profile-copies consumer alone, as a stream handler (tests). */
export const handler = consumerHandler(profileCopiesConsumer, consume);
