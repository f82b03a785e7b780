/**
 * The input rules of Add and Update CRDT Data that a schema cannot state with the contract's exact messages:
 * an editor id is required, and `data` must match `type` (docs/decisions.md §8), nest at most MAX_DEPTH levels and, for
 * xml, parse. Pure functions; they run before storage is read or written.
 */
import type { CrdtType } from '../../db/crdt';
import { InvalidArgumentError } from '../../core/errors';
import { checkWriteFormat, type WriteFormat } from './format-rules';
import { MAX_DEPTH, isObject, tooDeep, type JsonValue } from './json-value';
import { parseXml, type XmlNode } from './xml';

/** Throws INVALID_ARGUMENT `Editor ID is required.` when the editor id is missing or empty. */
export function checkEditorId(editorId: string | undefined): string {
  if (editorId === undefined || editorId === '') throw new InvalidArgumentError('Editor ID is required.');
  return editorId;
}

const EXPECTED: Record<CrdtType, { noun: string; matches: (data: unknown) => boolean }> = {
  text: { noun: 'a string', matches: (data) => typeof data === 'string' },
  map: { noun: 'an object', matches: isObject },
  array: { noun: 'an array', matches: Array.isArray },
  xml: { noun: 'a string', matches: (data) => typeof data === 'string' },
};

function checkDepth(value: unknown, depth: number): void {
  if (depth > MAX_DEPTH) throw tooDeep();
  if (Array.isArray(value)) for (const item of value) checkDepth(item, depth + 1);
  else if (isObject(value)) for (const item of Object.values(value)) checkDepth(item, depth + 1);
}

/** Content that passed checkContent; xml also as its parsed nodes, for building from them without parsing again. */
export interface CheckedContent {
  type: CrdtType;
  data: JsonValue;
  parsedXml?: XmlNode[];
}

/**
 * Checks that `type` and `data` are present and that data matches the type (docs/decisions.md §8), nests at most
 * MAX_DEPTH levels and, for xml, parses; throws InvalidArgumentError with the contract's messages
 * (`Data must be a string for type text.`). Everything is checked before storage is read or written.
 */
export function checkContent(type: CrdtType | undefined, data: unknown): CheckedContent {
  if (type === undefined) throw new InvalidArgumentError('Type is required.');
  if (data === undefined) throw new InvalidArgumentError('Data is required.');
  if (!EXPECTED[type].matches(data))
    throw new InvalidArgumentError(`Data must be ${EXPECTED[type].noun} for type ${type}.`);
  return checkedContent(type, data);
}

/**
 * Update without `type`: `data` must match the type the editor was created with (`storedType`), which only the
 * stored editor knows, so the message says so (`Data must be a string: this editor was created with type text.`).
 */
export function checkContentOfStoredType(storedType: CrdtType, data: unknown): CheckedContent {
  if (!EXPECTED[storedType].matches(data)) {
    throw new InvalidArgumentError(
      `Data must be ${EXPECTED[storedType].noun}: this editor was created with type ${storedType}.`,
    );
  }
  return checkedContent(storedType, data);
}

function checkedContent(type: CrdtType, data: unknown): CheckedContent {
  checkDepth(data, 0);
  if (type === 'xml') return { type, data: data as JsonValue, parsedXml: parseXml(data as string) };
  return { type, data: data as JsonValue };
}

/**
 * Content given as `format` + `content` (decisions §15) instead of `data`: both present, no `data` beside them,
 * and the format one that `type` (when given) takes. Throws InvalidArgumentError; returns the format. `content`
 * itself is checked when it is parsed (formats/).
 */
export function checkFormattedInput(input: {
  type?: CrdtType;
  data?: unknown;
  format?: WriteFormat;
  content?: unknown;
}): WriteFormat | undefined {
  if (input.format === undefined) {
    if (input.content !== undefined)
      throw new InvalidArgumentError('Content is only taken with a format (prosemirror-json, html or markdown).');
    return undefined;
  }
  if (input.data !== undefined) throw new InvalidArgumentError('Provide either data or format and content, not both.');
  if (input.content === undefined) throw new InvalidArgumentError('Content is required with a format.');
  if (input.type !== undefined) checkWriteFormat(input.type, input.format);
  return input.format;
}
