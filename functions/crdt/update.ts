import * as z from 'zod/mini';
import { updateCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { crdtFields } from '../../shared/http/schemas';

/** Either the fields of Add (the content is replaced through Yjs operations) or `yjsUpdate`, merged as it is. */
export const schema = z.object({
  ...crdtFields(),
  yjsUpdate: z.optional(z.string()),
});

export const result = messageOnly();

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    await updateCrdtData(caller.apiKeyId, data);
    return { message: 'CRDT data updated successfully.' };
  },
});
