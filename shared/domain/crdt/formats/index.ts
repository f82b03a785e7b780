/**
 * xml editors' content in readable formats (docs/decisions.md §15): ProseMirror JSON, HTML, Markdown and plain text
 * out; ProseMirror JSON, HTML and Markdown in. The Y.XmlFragment ↔ ProseMirror mapping is y-prosemirror's, the one a
 * Tiptap or ProseMirror editor bound to the fragment uses, so what the service writes is what such an editor would
 * have written, and an update diffs like that editor's own changes (updateYFragment: blocks and text that stay the
 * same keep their Yjs items).
 *
 * This module carries ProseMirror, markdown-it and a DOM: only the functions that convert (crdt get, add, update)
 * load it, behind a dynamic import (functions/crdt/*.ts), so no other bundle and no cold start carries it.
 */
import { Node } from 'prosemirror-model';
import { updateYFragment, yXmlFragmentToProsemirrorJSON } from 'y-prosemirror';
import * as Y from 'yjs';
import { InvalidArgumentError } from '../../../core/errors';
import { isObject, type JsonObject } from '../json-value';
import type { ReadableXmlFormat, WriteFormat } from '../format-rules';
import { fromHtml, toHtml } from './html';
import { markdownParser, toMarkdown } from './markdown';
import { readingSchema, schema, type NodeJson } from './schema';

/**
 * Loads this module (ProseMirror, markdown-it, a DOM): the functions that convert pass `() => import(...)`, so the
 * libraries stay out of every other bundle and out of every cold start (infra/bundling.ts splits dynamic imports).
 * A type only: the modules that take a loader import nothing of this one at run time.
 */
export type LoadFormats = () => Promise<FormatsModule>;

/** What the modules that take a loader use of this one. */
export interface FormatsModule {
  parseContent: typeof parseContent;
  xmlStateOf: typeof xmlStateOf;
  replaceXmlContent: typeof replaceXmlContent;
  renderXml: typeof renderXml;
}

/** What an error message quotes of the content at most. */
const QUOTE_CHARS = 200;
const clip = (text: string) => (text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text);

const isInt = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;
const isStringOrNull = (value: unknown) => value === null || typeof value === 'string';

/** Attribute rules the schema's defaults cannot state; `problem` names what is wrong, or undefined. */
const ATTRIBUTE_RULES: Record<string, (attrs: Record<string, unknown>) => string | undefined> = {
  heading: ({ level }) => (isInt(level, 1, 6) ? undefined : 'heading level must be an integer from 1 to 6'),
  orderedList: ({ start }) => (isInt(start, 0) ? undefined : 'orderedList start must be an integer of at least 0'),
  codeBlock: ({ language }) => (isStringOrNull(language) ? undefined : 'codeBlock language must be a string or null'),
  image: ({ src, alt, title }) =>
    typeof src === 'string' && src !== '' && isStringOrNull(alt) && isStringOrNull(title)
      ? undefined
      : 'image needs a src string (alt and title: strings or null)',
  tableCell: ({ colspan, rowspan }) =>
    isInt(colspan, 1) && isInt(rowspan, 1) ? undefined : 'tableCell colspan and rowspan must be positive integers',
  tableHeader: ({ colspan, rowspan }) =>
    isInt(colspan, 1) && isInt(rowspan, 1) ? undefined : 'tableHeader colspan and rowspan must be positive integers',
};

/** Throws INVALID_ARGUMENT naming the first node or mark whose attributes break a rule. */
function checkAttributes(doc: Node): void {
  doc.descendants((node) => {
    const problem = ATTRIBUTE_RULES[node.type.name]?.(node.attrs);
    if (problem !== undefined) throw new InvalidArgumentError(`Content is not valid: ${problem}.`);
    for (const mark of node.marks) {
      if (mark.type.name === 'link' && (typeof mark.attrs.href !== 'string' || mark.attrs.href === '')) {
        throw new InvalidArgumentError('Content is not valid: link needs an href string.');
      }
    }
  });
}

/** ProseMirror JSON as a document of the schema; throws INVALID_ARGUMENT naming an unknown node, mark or shape. */
function fromProsemirrorJson(content: unknown): Node {
  if (!isObject(content))
    throw new InvalidArgumentError('Content must be an object (ProseMirror JSON) for format prosemirror-json.');
  if (content.type !== 'doc')
    throw new InvalidArgumentError('Content must be a ProseMirror document: {"type": "doc", "content": [...]}.');
  let doc: Node;
  try {
    doc = Node.fromJSON(schema, content);
    doc.check();
  } catch (error) {
    // prosemirror-model's messages name the problem: "Unknown node type: mention", "Invalid content for node …".
    throw new InvalidArgumentError(
      `Content is not valid ProseMirror JSON: ${clip(error instanceof Error ? error.message : String(error))}`,
    );
  }
  return doc;
}

/**
 * The document that `content` in `format` describes, checked against the schema (node and mark names, content
 * shapes, attributes). Throws InvalidArgumentError naming what is wrong; nothing has been read or written yet.
 */
export function parseContent(format: WriteFormat, content: unknown): Node {
  let doc: Node;
  if (format === 'prosemirror-json') doc = fromProsemirrorJson(content);
  else {
    if (typeof content !== 'string') throw new InvalidArgumentError(`Content must be a string for format ${format}.`);
    doc = format === 'html' ? fromHtml(content) : markdownParser.parse(content);
    try {
      doc.check();
    } catch (error) {
      throw new InvalidArgumentError(
        `Content does not fit the document schema: ${clip(error instanceof Error ? error.message : String(error))}`,
      );
    }
  }
  checkAttributes(doc);
  return doc;
}

/** updateYFragment's bookkeeping, fresh per call (the Y types already matched to ProseMirror nodes). */
const freshMeta = () => ({ mapping: new Map(), isOMark: new Map() });

/** The Yjs state of a new document whose XmlFragment under `contentKey` holds `doc` as y-prosemirror writes it. */
export function xmlStateOf(contentKey: string, doc: Node): Uint8Array {
  const ydoc = new Y.Doc();
  updateYFragment(ydoc, ydoc.getXmlFragment(contentKey), doc, freshMeta());
  return Y.encodeStateAsUpdate(ydoc);
}

/**
 * The state after making the XmlFragment under `contentKey` hold `doc`, and that change as an update of its own
 * (`delta`). y-prosemirror's diff keeps the Yjs items of blocks and text that stay the same, so relative positions
 * (carets) in them and concurrent edits elsewhere survive.
 */
export function replaceXmlContent(
  state: Uint8Array,
  contentKey: string,
  doc: Node,
): { state: Uint8Array; delta: Uint8Array } {
  const ydoc = new Y.Doc();
  Y.applyUpdate(ydoc, state);
  const before = Y.encodeStateVector(ydoc);
  updateYFragment(ydoc, ydoc.getXmlFragment(contentKey), doc, freshMeta());
  return { state: Y.encodeStateAsUpdate(ydoc), delta: Y.encodeStateAsUpdate(ydoc, before) };
}

/** Plain text: one blank line between blocks, a hard break as a line break. */
const toText = (doc: Node) =>
  doc.textBetween(0, doc.content.size, '\n\n', (leaf) => leaf.type.spec.leafText?.(leaf) ?? '');

/**
 * The content of the XmlFragment under `contentKey` in a readable format. Read through y-prosemirror's JSON (which
 * needs no schema) and a schema extended with whatever nodes and marks the document holds beyond Tiptap's, so
 * nothing is dropped (schema.ts).
 */
export function renderXml(state: Uint8Array, contentKey: string, format: ReadableXmlFormat): string | JsonObject {
  const ydoc = new Y.Doc();
  Y.applyUpdate(ydoc, state);
  const json = yXmlFragmentToProsemirrorJSON(ydoc.getXmlFragment(contentKey)) as NodeJson;
  const doc = Node.fromJSON(readingSchema(json), json);
  switch (format) {
    case 'prosemirror-json':
      return doc.toJSON() as JsonObject;
    case 'html':
      return toHtml(doc);
    case 'markdown':
      return toMarkdown(doc);
    case 'text':
      return toText(doc);
  }
}
