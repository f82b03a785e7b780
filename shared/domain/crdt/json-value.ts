/**
 * The values an editor's content is made of (plain JSON), and how deep they may nest: objects, arrays and XML
 * elements nest at most MAX_DEPTH levels, so the recursive code of the other crdt modules cannot exhaust the
 * stack.
 */
import { InvalidArgumentError } from '../../core/errors';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Nesting depth of values and XML: deep enough for any editor content, shallow enough for recursion. */
export const MAX_DEPTH = 100;

/** The InvalidArgumentError for content nesting deeper than MAX_DEPTH. */
export const tooDeep = () => new InvalidArgumentError(`Data must not nest deeper than ${MAX_DEPTH} levels.`);

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
