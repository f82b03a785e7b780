import { closedConnection } from '../../shared/domain/live/connections';
import { socketHandler } from '../../shared/http/socket';

/** `$disconnect`: removes the connection and tells its room that its clients left. */
export const handler = socketHandler('$disconnect', ({ connectionId }) => closedConnection(connectionId));
