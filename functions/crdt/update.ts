import * as z from 'zod/mini';
import { updateCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { CRDT_CONTENT_RULES, crdtFields, documentedRules, requires } from '../../shared/http/schemas';

/**
 * Either the fields of Add (the content is replaced through Yjs operations; without `type` the stored type and
 * contentKey are kept) or `yjsUpdate`, merged as it is.
 */
export const schema = documentedRules(
  z.object({
    ...crdtFields(),
    yjsUpdate: z.optional(z.string()),
  }),
  {
    required: ['organizationId', 'documentId', 'editorId'],
    allOf: CRDT_CONTENT_RULES,
    // `data` (with its `type`, or keeping the stored one) or `yjsUpdate`, never both.
    anyOf: [
      { ...requires('data'), not: requires('yjsUpdate') },
      { ...requires('yjsUpdate'), not: { anyOf: [requires('type'), requires('data')] } },
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
