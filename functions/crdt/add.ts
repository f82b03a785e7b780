import * as z from 'zod/mini';
import { addCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { CRDT_CONTENT_RULES, crdtFields, documentedRules } from '../../shared/http/schemas';

/** The domain checks editorId, type and data to answer the contract's own messages ("Type is required."). */
export const schema = documentedRules(z.object(crdtFields()), {
  required: ['organizationId', 'documentId', 'editorId', 'type', 'data'],
  allOf: CRDT_CONTENT_RULES,
});

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
