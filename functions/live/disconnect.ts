import { onDisconnect } from '../../shared/domain/live/socket-events';
import { socketHandler } from '../../shared/http/socket';

/** `$disconnect`: removes the connection and tells its room that its clients left. */
export const handler = socketHandler('$disconnect', ({ connectionId }) => onDisconnect(connectionId));
