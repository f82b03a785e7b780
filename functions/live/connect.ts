import { onConnect } from '../../shared/domain/live/socket-events';
import { socketHandler } from '../../shared/http/socket';

/** `$connect`: records the connection, accepted or refused (a refused one hears why on its first message). */
export const handler = socketHandler('$connect', ({ connectionId, query }) => onConnect({ connectionId, query }));
