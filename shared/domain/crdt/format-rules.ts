/**
 * Which content formats each editor type can be read and written in (docs/decisions.md §15), without the libraries
 * that convert (those are in formats/, loaded only by the functions that convert). Pure.
 */
import type { CrdtType } from '../../db/crdt';
import { InvalidArgumentError } from '../../core/errors';

/** Every `format` of Get CRDT Data; `json` is the default. */
export const READ_FORMATS = ['json', 'prosemirror-json', 'html', 'markdown', 'text', 'delta', 'yjs'] as const;
export type ReadFormat = (typeof READ_FORMATS)[number];

/** The formats Add and Update take as `content` (xml editors only). */
export const WRITE_FORMATS = ['prosemirror-json', 'html', 'markdown'] as const;
export type WriteFormat = (typeof WRITE_FORMATS)[number];

/** The formats converted by the libraries of formats/ (ProseMirror, Markdown, a DOM). */
export type ReadableXmlFormat = Extract<ReadFormat, 'prosemirror-json' | 'html' | 'markdown' | 'text'>;

const READABLE_BY_TYPE: Record<CrdtType, readonly ReadFormat[]> = {
  xml: ['json', 'prosemirror-json', 'html', 'markdown', 'text', 'yjs'],
  text: ['json', 'delta', 'yjs'],
  map: ['json', 'yjs'],
  array: ['json', 'yjs'],
};

export const isReadableXmlFormat = (format: ReadFormat): format is ReadableXmlFormat =>
  format === 'prosemirror-json' || format === 'html' || format === 'markdown' || format === 'text';

/** Throws INVALID_ARGUMENT `Format html is not available for type text.` when `type` cannot be read in `format`. */
export function checkReadFormat(type: CrdtType, format: ReadFormat): void {
  if (!READABLE_BY_TYPE[type].includes(format))
    throw new InvalidArgumentError(`Format ${format} is not available for type ${type}.`);
}

/** Throws INVALID_ARGUMENT (same wording as reads) when content in `format` cannot be written to a `type` editor. */
export function checkWriteFormat(type: CrdtType, format: WriteFormat): void {
  if (type !== 'xml') throw new InvalidArgumentError(`Format ${format} is not available for type ${type}.`);
}
