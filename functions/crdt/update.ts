import * as z from 'zod/mini';
import { updateCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { crdtFields, documentedRules } from '../../shared/http/schemas';

/** Either the fields of Add (the content is replaced through Yjs operations) or `yjsUpdate`, merged as it is. */
export const schema = documentedRules(
  z.object({
    ...crdtFields(),
    yjsUpdate: z.optional(z.string()),
  }),
  {
    required: ['organizationId', 'documentId', 'editorId'],
    anyOf: [
      { properties: { type: {}, data: {} }, required: ['type', 'data'] },
      { properties: { yjsUpdate: {} }, required: ['yjsUpdate'] },
    ],
  },
);

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
