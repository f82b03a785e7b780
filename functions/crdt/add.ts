import * as z from 'zod/mini';
import { addCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { crdtFields } from '../../shared/http/schemas';

export const schema = z.object(crdtFields());

export const result = messageOnly();

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    await addCrdtData(caller.apiKeyId, data);
    return { message: 'CRDT data added successfully.' };
  },
});
