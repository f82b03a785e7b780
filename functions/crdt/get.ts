import * as z from 'zod/mini';
import { READ_FORMATS } from '../../shared/domain/crdt/format-rules';
import { getCrdtData } from '../../shared/domain/crdt/reads';
import { operation } from '../../shared/http/operation';
import { answer, clientObject } from '../../shared/http/results';
import { clientId } from '../../shared/http/schemas';

export const schema = z.object({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: z.optional(clientId()),
  /**
   * `json` (default): the plain value. `yjs` adds each editor's Yjs state (base64), type and contentKey, for an
   * editor to load. xml editors also `prosemirror-json`, `html`, `markdown`, `text`; text editors `delta`
   * (decisions §15); a format that does not fit an editor's type is INVALID_ARGUMENT.
   */
  format: z.optional(z.enum(READ_FORMATS)),
  /** The editor as it was at this version (decisions §14); needs `editorId`. Unknown: NOT_FOUND `Version not found.` */
  versionId: z.optional(clientId()),
});

/** What every record has besides its content: the editor id, and when and by whom (null: not said) it was last changed. */
const head = {
  id: z.string(),
  lastUpdate: z.iso.datetime(),
  lastUpdatedBy: z.nullable(z.string()),
  sessionId: z.null(),
};

/** `data` by the editor's type: a string for text and xml (its string form), an object for map, an array for array. */
const text = () => z.string();
const map = () => clientObject();
const array = () => z.array(z.unknown());

/** A record with `format: 'yjs'`: with the Yjs state (base64), the type that `data` matches and the contentKey. */
const yjsRecord = <T extends string, D extends z.core.SomeType>(type: T, data: D) =>
  z.object({ data, ...head, state: z.string(), type: z.literal(type), contentKey: z.string() });

/**
 * One record per editor (none for an unknown editorId); `format: 'json'` (the default) gives the plain value only,
 * the readable formats `data` in that format: a string (html, markdown, text), a ProseMirror JSON object, or a
 * text's delta (an array).
 */
export const result = answer(
  z.array(
    z.union([
      z.object({ data: z.union([text(), map(), array()]), ...head }),
      yjsRecord('text', text()),
      yjsRecord('xml', text()),
      yjsRecord('map', map()),
      yjsRecord('array', array()),
    ]),
  ),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({
    message: 'CRDT data retrieved successfully.',
    // The converters (ProseMirror, markdown-it, a DOM) load only for a readable format: not at cold start.
    data: await getCrdtData(caller.apiKeyId, data, () => import('../../shared/domain/crdt/formats/index')),
  }),
});
