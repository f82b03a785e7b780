import * as z from 'zod/mini';
import { CRDT_TYPES } from '../../shared/db/crdt';
import { authorizeLiveSession } from '../../shared/domain/live/sessions';
import { operation } from '../../shared/http/operation';
import { answer } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';

/** decisions §13: `expiresIn` seconds, 60–86,400 (default 3,600). */
export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: clientId(),
  userId: clientId(),
  /** Creates the editor empty when it does not exist yet. */
  type: z.optional(z.enum(CRDT_TYPES)),
  contentKey: z.optional(clientId()),
  expiresIn: z.optional(z.int().check(z.minimum(60), z.maximum(86_400))),
});

/** What the browser needs: `new WebsocketProvider(serverUrl, room, ydoc, {params: {token}})`. */
export const result = answer(
  z.object({
    token: z.string(),
    serverUrl: z.string(),
    room: z.string(),
    accessRole: z.enum(['editor', 'viewer']),
    expiresAt: z.int(),
  }),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller, request }) => ({
    message: 'Live session authorized.',
    data: await authorizeLiveSession(caller.apiKeyId, data, request.host),
  }),
});
