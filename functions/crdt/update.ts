import * as z from 'zod/mini';
import { updateCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { CRDT_CONTENT_RULES, crdtFields, documentedRules, requires } from '../../shared/http/schemas';

/**
 * Either the fields of Add (the content is replaced through Yjs operations; without `type` the stored type and
 * contentKey are kept; an xml editor's content may come as `format` + `content`, decisions §15) or `yjsUpdate`,
 * merged as it is.
 */
export const schema = documentedRules(
  z.object({
    ...crdtFields(),
    yjsUpdate: z.optional(z.string()),
  }),
  {
    required: ['organizationId', 'documentId', 'editorId'],
    allOf: CRDT_CONTENT_RULES,
    // `data` (with its `type`, or keeping the stored one), `format` + `content`, or `yjsUpdate`: one of them.
    anyOf: [
      { ...requires('data'), not: { anyOf: [requires('yjsUpdate'), requires('format'), requires('content')] } },
      { ...requires('format', 'content'), not: { anyOf: [requires('yjsUpdate'), requires('data')] } },
      {
        ...requires('yjsUpdate'),
        not: { anyOf: [requires('type'), requires('data'), requires('format'), requires('content')] },
      },
    ],
  },
);

export const result = messageOnly();

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    // The converters (ProseMirror, markdown-it, a DOM) load only for content in a format: not at cold start.
    await updateCrdtData(caller.apiKeyId, data, Date.now(), () => import('../../shared/domain/crdt/formats/index'));
    return { message: 'CRDT data updated successfully.' };
  },
});
