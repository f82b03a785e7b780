import * as z from 'zod/mini';
import { getCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: z.optional(clientId()),
  /** `yjs` adds each editor's Yjs state (base64), type and contentKey, for an editor to load. */
  format: z.optional(z.enum(['json', 'yjs'])),
});

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => ({
    message: 'CRDT data retrieved successfully.',
    data: await getCrdtData(caller.apiKeyId, data),
  }),
});
