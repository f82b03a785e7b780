import { onMessage } from '../../shared/domain/live/socket-events';
import { socketHandler } from '../../shared/http/socket';

/** `$default`: one frame of a connection (sync, update, presence), or one part of a chunked message. */
export const handler = socketHandler('$default', async ({ connectionId, frame }) => {
  if (frame !== undefined) await onMessage(connectionId, frame);
});
