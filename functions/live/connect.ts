import { openConnection } from '../../shared/domain/live/connections';
import { socketHandler } from '../../shared/http/socket';

/** `$connect`: records the connection, accepted or refused (a refused one hears why on its first message). */
export const handler = socketHandler('$connect', ({ connectionId, query }) => openConnection({ connectionId, query }));
