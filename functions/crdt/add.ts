import * as z from 'zod/mini';
import { addCrdtData } from '../../shared/domain/crdt/operations';
import { operation } from '../../shared/http/operation';
import { messageOnly } from '../../shared/http/results';
import { CRDT_CONTENT_RULES, crdtFields, documentedRules, requires } from '../../shared/http/schemas';

/**
 * The domain checks editorId, type and data to answer the contract's own messages ("Type is required."). An xml
 * editor's content may come as `format` + `content` instead of `data` (decisions §15).
 */
export const schema = documentedRules(z.object(crdtFields()), {
  required: ['organizationId', 'documentId', 'editorId', 'type'],
  allOf: CRDT_CONTENT_RULES,
  anyOf: [
    { ...requires('data'), not: { anyOf: [requires('format'), requires('content')] } },
    { ...requires('format', 'content'), not: requires('data') },
  ],
});

export const result = messageOnly();

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => {
    // The converters (ProseMirror, markdown-it, a DOM) load only for content in a format: not at cold start.
    await addCrdtData(caller.apiKeyId, data, Date.now(), () => import('../../shared/domain/crdt/formats/index'));
    return { message: 'CRDT data added successfully.' };
  },
});
