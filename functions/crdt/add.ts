import * as z from 'zod/mini';
import { addCrdtData, crdtFields } from '../../shared/domain/crdt';
import { operation } from '../../shared/http/operation';

export const schema = z.object(crdtFields);

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    await addCrdtData(caller.apiKeyId, data);
    return { message: 'CRDT data added successfully.' };
  },
});
