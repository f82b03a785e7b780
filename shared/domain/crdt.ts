/**
 * CRDT editor data (api-spec "CRDT data", decisions §8): each editor's content is a real Yjs document with one
 * root of the editor's type under `contentKey`, so an editor using Yjs can load the stored state as it is.
 *
 * The Yjs functions here are pure (state in, state or value out): build a state from a value, read the value of a
 * state, replace the content through Yjs operations, merge a client's update. The operations at the end compose
 * them with storage (shared/db/crdt.ts).
 *
 * Rules where the contract is silent (also in the README):
 * - map and array values become nested Y types: objects are Y.Map, arrays Y.Array, other JSON values are stored
 *   as they are; so two clients editing different keys of a nested object merge instead of overwriting.
 * - A replacement (Update with `data`) changes only what differs: text by one delete and one insert between the
 *   common prefix and suffix (never splitting a surrogate pair), maps key by key (recursing into nested maps and
 *   arrays), arrays and XML children by replacing the differing middle run. Concurrent client edits elsewhere in
 *   the content survive.
 * - XML is parsed strictly (well-formed fragment: several roots and top-level text allowed; entities, CDATA;
 *   comments and processing instructions dropped; DOCTYPE refused). Its string form is canonical: attributes
 *   sorted by name, empty elements as `<x></x>` (as Yjs writes them), text and attribute values escaped, element
 *   names with their case kept.
 * - Values nest at most 100 levels (objects, arrays, XML elements).
 * - Concurrent updates of one editor never fail: they merge as concurrent Yjs edits (see updateCrdtData).
 */
import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod/mini';
import * as Y from 'yjs';
import {
  CRDT_TYPES,
  MAX_STATE_BYTES,
  createEditor,
  getEditor,
  listEditors,
  updateEditor,
  type CrdtType,
  type EditorRef,
  type StoredEditor,
  type TransactionWriter,
} from '../db/crdt';
import { ensureOrganizationItem, getDocument, upsertDocumentItem } from '../db/organization';
import { AlreadyExistsError, InvalidArgumentError, NotFoundError, ServiceError } from '../http/errors';
import { clientId } from '../http/schemas';
import { assertDocumentsWritable, documentsIn, transactGuarded } from './document-locks';

export { CRDT_TYPES, type CrdtType };

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
type JsonObject = { [key: string]: JsonValue };

export const DEFAULT_CONTENT_KEY = 'content';
/** Nesting depth of values and XML: deep enough for any editor content, shallow enough for recursion. */
export const MAX_DEPTH = 100;
/**
 * A Lambda response holds at most 6 MB, and carries the body as a JSON string (escaped once more): records whose
 * twice-encoded form exceeds this would fail in AWS, so they are refused everywhere.
 */
const MAX_RESPONSE_BYTES = 6_000_000;

const tooDeep = () => new InvalidArgumentError(`Data must not nest deeper than ${MAX_DEPTH} levels.`);
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

// ---------------------------------------------------------------------------------------------------------------
// Input rules

/**
 * The fields of Add and Update. `editorId`, `type` and `data` are optional here so that their absence gets the
 * contract's exact messages (checkEditorId, checkContent) rather than a validation summary.
 */
export const crdtFields = {
  organizationId: clientId(),
  documentId: clientId(),
  editorId: z.optional(z.union([z.literal(''), clientId()])),
  type: z.optional(z.enum(CRDT_TYPES)),
  data: z.optional(z.unknown()),
  contentKey: z.optional(clientId()),
  userId: z.optional(clientId()),
};

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

/**
 * Checks that `type` and `data` are present and that data matches the type (decisions §8), nests at most
 * MAX_DEPTH levels and, for xml, parses; throws InvalidArgumentError with the contract's messages
 * (`Data must be a string for type text.`). Everything is checked before storage is read or written.
 */
export function checkContent(type: CrdtType | undefined, data: unknown): { type: CrdtType; data: JsonValue } {
  if (type === undefined) throw new InvalidArgumentError('Type is required.');
  if (data === undefined) throw new InvalidArgumentError('Data is required.');
  if (!EXPECTED[type].matches(data)) throw new InvalidArgumentError(`Data must be ${EXPECTED[type].noun} for type ${type}.`);
  checkDepth(data, 0);
  if (type === 'xml') parsedXml(data as string);
  return { type, data: data as JsonValue };
}

// ---------------------------------------------------------------------------------------------------------------
// XML: a strict parser for fragments, and one serializer for parsed nodes and Yjs XML types alike

export type XmlNode =
  | { kind: 'element'; name: string; attributes: Array<[string, string]>; children: XmlNode[] }
  | { kind: 'text'; text: string };
type XmlElementNode = Extract<XmlNode, { kind: 'element' }>;

const NAME = /[:A-Z_a-z\u00C0-\uFFFF][-.0-9:A-Z_a-z\u00B7\u00C0-\uFFFF]*/y;
const SPACE = /[ \t\r\n]*/y;
const ENTITY = /&(?:#x([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|([A-Za-z]+));/y;
const TEXT_RUN = /[^<&]+/y;
const ATTRIBUTE_RUN = { '"': /[^"<&]+/y, "'": /[^'<&]+/y } as const;
const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Matches the sticky `pattern` at `position`; returns the match or undefined. */
function matchAt(pattern: RegExp, source: string, position: number): RegExpExecArray | undefined {
  pattern.lastIndex = position;
  return pattern.exec(source) ?? undefined;
}

/**
 * Parses an XML fragment (several top-level nodes allowed) into element and text nodes. Iterative, so deep input
 * cannot exhaust the stack. Throws InvalidArgumentError naming the first error and its offset.
 */
export function parseXml(source: string): XmlNode[] {
  const root: XmlNode[] = [];
  const open: XmlElementNode[] = [];
  let position = 0;
  let text = '';
  const fail = (reason: string) => new InvalidArgumentError(`Data is not valid XML: ${reason} at offset ${position}.`);
  const children = () => (open.length > 0 ? open[open.length - 1].children : root);
  const flushText = () => {
    if (text !== '') children().push({ kind: 'text', text });
    text = '';
  };
  const readName = () => {
    const match = matchAt(NAME, source, position);
    if (!match) throw fail('expected a name');
    position += match[0].length;
    return match[0];
  };
  const skipSpace = () => {
    const skipped = matchAt(SPACE, source, position)?.[0].length ?? 0;
    position += skipped;
    return skipped > 0;
  };
  const readEntity = () => {
    const match = matchAt(ENTITY, source, position);
    if (!match) throw fail('"&" must start an entity such as &amp;');
    const [whole, hex, decimal, name] = match;
    let value: string | undefined;
    if (name !== undefined) value = NAMED_ENTITIES[name];
    else {
      const code = parseInt(hex ?? decimal, hex !== undefined ? 16 : 10);
      const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
      value = valid ? String.fromCodePoint(code) : undefined;
    }
    if (value === undefined) throw fail(`unknown entity ${whole}`);
    position += whole.length;
    return value;
  };
  const skipPast = (terminator: string, what: string) => {
    const end = source.indexOf(terminator, position);
    if (end < 0) throw fail(`unterminated ${what}`);
    const content = source.slice(position, end);
    position = end + terminator.length;
    return content;
  };

  while (position < source.length) {
    const run = matchAt(TEXT_RUN, source, position);
    if (run) {
      text += run[0];
      position += run[0].length;
    } else if (source[position] === '&') {
      text += readEntity();
    } else if (source.startsWith('<!--', position)) {
      position += 4;
      skipPast('-->', 'comment');
    } else if (source.startsWith('<![CDATA[', position)) {
      position += 9;
      text += skipPast(']]>', 'CDATA section');
    } else if (source.startsWith('<?', position)) {
      position += 2;
      skipPast('?>', 'processing instruction');
    } else if (source.startsWith('<!', position)) {
      // DOCTYPE and entity declarations are refused: entity expansion is a denial-of-service vector.
      throw fail('declarations such as DOCTYPE are not supported');
    } else if (source.startsWith('</', position)) {
      flushText();
      position += 2;
      const name = readName();
      skipSpace();
      if (source[position] !== '>') throw fail(`expected ">" to end </${name}`);
      const element = open.pop();
      if (element?.name !== name) throw fail(element ? `</${name}> does not close <${element.name}>` : `</${name}> closes no element`);
      position += 1;
    } else {
      flushText();
      position += 1;
      const element: XmlElementNode = { kind: 'element', name: readName(), attributes: [], children: [] };
      for (;;) {
        const spaced = skipSpace();
        if (source.startsWith('/>', position) || source[position] === '>') break;
        if (!spaced) throw fail(`expected whitespace, ">" or "/>" in <${element.name}>`);
        const attribute = readName();
        skipSpace();
        if (source[position] !== '=') throw fail(`expected "=" after attribute ${attribute}`);
        position += 1;
        skipSpace();
        const quote = source[position];
        if (quote !== '"' && quote !== "'") throw fail(`expected a quoted value for attribute ${attribute}`);
        position += 1;
        let value = '';
        while (source[position] !== quote) {
          const valueRun = matchAt(ATTRIBUTE_RUN[quote], source, position);
          if (valueRun) {
            value += valueRun[0];
            position += valueRun[0].length;
          } else if (source[position] === '&') value += readEntity();
          else throw fail(position >= source.length ? 'unterminated attribute value' : '"<" in an attribute value');
        }
        position += 1;
        if (element.attributes.some(([existing]) => existing === attribute)) throw fail(`duplicate attribute ${attribute}`);
        element.attributes.push([attribute, value]);
      }
      children().push(element);
      if (source[position] === '>') {
        open.push(element);
        if (open.length > MAX_DEPTH) throw tooDeep();
        position += 1;
      } else position += 2;
    }
  }
  flushText();
  if (open.length > 0) throw fail(`<${open[open.length - 1].name}> is not closed`);
  return root;
}

const TEXT_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeText = (text: string) => text.replace(/[&<>]/g, (char) => TEXT_ESCAPES[char]);
const escapeAttribute = (value: string) => value.replace(/[&<>"]/g, (char) => TEXT_ESCAPES[char]);
const attributeText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value) ?? '');

function elementString(name: string, attributes: Iterable<[string, unknown]>, inner: string): string {
  const sorted = [...attributes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rendered = sorted.map(([attribute, value]) => ` ${attribute}="${escapeAttribute(attributeText(value))}"`).join('');
  return `<${name}${rendered}>${inner}</${name}>`;
}

let lastParsed: { source: string; nodes: XmlNode[] } | undefined;

/**
 * parseXml, remembering the last input: a request checks its XML before touching storage and builds from it
 * afterwards, and parsing a large fragment twice would double the most expensive step.
 */
function parsedXml(source: string): XmlNode[] {
  if (lastParsed?.source !== source) lastParsed = { source, nodes: parseXml(source) };
  return lastParsed.nodes;
}

/** The canonical string form of parsed nodes (the same form xmlString gives for the Yjs types they build). */
export function serializeXml(nodes: readonly XmlNode[], depth = 0): string {
  if (depth > MAX_DEPTH) throw tooDeep();
  return nodes
    .map((node) => (node.kind === 'text' ? escapeText(node.text) : elementString(node.name, node.attributes, serializeXml(node.children, depth + 1))))
    .join('');
}

interface DeltaOp {
  insert: unknown;
  attributes?: Record<string, unknown>;
}

/**
 * Formatted text (from Yjs editors, e.g. marks) renders as nested tags named by the format, as Yjs's own toString
 * does; embeds have no XML form and are left out.
 */
function xmlTextString(text: Y.XmlText): string {
  return (text.toDelta() as DeltaOp[])
    .map(({ insert, attributes = {} }) => {
      if (typeof insert !== 'string') return '';
      const formats = Object.keys(attributes).sort();
      return formats.reduceRight((inner, format) => {
        const value = attributes[format];
        return elementString(format, isObject(value) ? Object.entries(value) : [], inner);
      }, escapeText(insert));
    })
    .join('');
}

/** The canonical string form of a Yjs XML type (fragment, element or text). */
export function xmlString(node: Y.XmlFragment | Y.XmlText | Y.XmlHook, depth = 0): string {
  if (depth > MAX_DEPTH) throw tooDeep();
  if (node instanceof Y.XmlText) return xmlTextString(node);
  // A hook is an application-defined node without an XML form.
  if (node instanceof Y.XmlHook) return '';
  const inner = node.toArray().map((child) => xmlString(child, depth + 1)).join('');
  return node instanceof Y.XmlElement ? elementString(node.nodeName, Object.entries(node.getAttributes()), inner) : inner;
}

function toYXml(node: XmlNode): Y.XmlElement | Y.XmlText {
  if (node.kind === 'text') return new Y.XmlText(node.text);
  const element = new Y.XmlElement(node.name);
  for (const [attribute, value] of node.attributes) element.setAttribute(attribute, value);
  element.insert(0, node.children.map(toYXml));
  return element;
}

// ---------------------------------------------------------------------------------------------------------------
// Yjs states

/** A JSON value as Yjs content: objects as Y.Map, arrays as Y.Array (preliminary types, integrated on insert). */
function toYValue(value: JsonValue): unknown {
  if (Array.isArray(value)) {
    const array = new Y.Array<unknown>();
    array.push(value.map(toYValue));
    return array;
  }
  if (isObject(value)) return new Y.Map(Object.entries(value).map(([key, item]) => [key, toYValue(item)] as const));
  return value;
}

/**
 * The plain JSON value of Yjs content, whatever a client stored in it. Object.fromEntries keeps a `__proto__`
 * key as data (Yjs's toJSON would drop it). Throws InvalidArgumentError beyond MAX_DEPTH.
 */
function plain(value: unknown, depth: number): JsonValue {
  if (depth > MAX_DEPTH) throw tooDeep();
  if (value instanceof Y.XmlFragment || value instanceof Y.XmlText || value instanceof Y.XmlHook) return xmlString(value, depth);
  if (value instanceof Y.Text) return value.toString();
  if (value instanceof Y.Map) return Object.fromEntries([...value.entries()].map(([key, item]) => [key, plain(item, depth + 1)]));
  if (value instanceof Y.Array) return value.toArray().map((item) => plain(item, depth + 1));
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  // A subdocument is a document of its own, not content of this one.
  if (value instanceof Y.Doc) return null;
  if (Array.isArray(value)) return value.map((item) => plain(item, depth + 1));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item, depth + 1)]));
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return null;
}

function load(state: Uint8Array): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, state);
  return doc;
}

/**
 * The editor's whole state: the stored state with its deltas (changes appended under contention) merged in.
 * Updates commute, so their order does not matter.
 */
export function editorState(editor: Pick<StoredEditor, 'state' | 'deltas'>): Uint8Array {
  if (editor.deltas.length === 0) return editor.state;
  const doc = load(editor.state);
  doc.transact(() => {
    for (const { update } of editor.deltas) Y.applyUpdate(doc, update);
  });
  return Y.encodeStateAsUpdate(doc);
}

function rootValue(doc: Y.Doc, type: CrdtType, contentKey: string): JsonValue {
  switch (type) {
    case 'text':
      return doc.getText(contentKey).toString();
    case 'map':
      return plain(doc.getMap(contentKey), 0);
    case 'array':
      return plain(doc.getArray(contentKey), 0);
    case 'xml':
      return xmlString(doc.getXmlFragment(contentKey));
  }
}

/**
 * The Yjs state (encodeStateAsUpdate) of a new document holding `data` in a root of `type` under `contentKey`.
 * Throws InvalidArgumentError for XML that does not parse.
 */
export function buildState(type: CrdtType, contentKey: string, data: JsonValue): Uint8Array {
  const doc = new Y.Doc();
  doc.transact(() => {
    switch (type) {
      case 'text':
        doc.getText(contentKey).insert(0, data as string);
        break;
      case 'map':
        for (const [key, value] of Object.entries(data as JsonObject)) doc.getMap(contentKey).set(key, toYValue(value));
        break;
      case 'array':
        doc.getArray(contentKey).insert(0, (data as JsonValue[]).map(toYValue));
        break;
      case 'xml':
        doc.getXmlFragment(contentKey).insert(0, parsedXml(data as string).map(toYXml));
        break;
    }
  });
  return Y.encodeStateAsUpdate(doc);
}

/** The plain value of a state: a string for text and xml (its canonical string form), an object, or an array. */
export function readValue(state: Uint8Array, type: CrdtType, contentKey: string): JsonValue {
  return rootValue(load(state), type, contentKey);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * The differing middle of two sequences: `start` is the length of the common prefix, `oldEnd` / `newEnd` where
 * the common suffix begins in each.
 */
function middle(oldLength: number, newLength: number, same: (oldIndex: number, newIndex: number) => boolean) {
  let start = 0;
  while (start < oldLength && start < newLength && same(start, start)) start += 1;
  let oldEnd = oldLength;
  let newEnd = newLength;
  while (oldEnd > start && newEnd > start && same(oldEnd - 1, newEnd - 1)) {
    oldEnd -= 1;
    newEnd -= 1;
  }
  return { start, oldEnd, newEnd };
}

/**
 * Text diff in UTF-16 units, widened so it never cuts a surrogate pair: Yjs replaces half a pair it has to split
 * with U+FFFD.
 */
export function textChange(previous: string, next: string): { index: number; remove: number; insert: string } {
  let { start, oldEnd, newEnd } = middle(previous.length, next.length, (i, j) => previous.charCodeAt(i) === next.charCodeAt(j));
  if (start > 0 && isHighSurrogate(previous.charCodeAt(start - 1))) start -= 1;
  if (oldEnd < previous.length && isLowSurrogate(previous.charCodeAt(oldEnd))) {
    oldEnd += 1;
    newEnd += 1;
  }
  return { index: start, remove: oldEnd - start, insert: next.slice(start, newEnd) };
}

const sameValue = (current: unknown, next: JsonValue) => isDeepStrictEqual(plain(current, 0), next);

function replaceMap(map: Y.Map<unknown>, value: JsonObject): void {
  for (const key of [...map.keys()]) if (!Object.hasOwn(value, key)) map.delete(key);
  for (const [key, next] of Object.entries(value)) {
    const current = map.get(key);
    if (isObject(next) && current instanceof Y.Map) replaceMap(current, next);
    else if (Array.isArray(next) && current instanceof Y.Array) replaceArray(current, next);
    else if (!map.has(key) || !sameValue(current, next)) map.set(key, toYValue(next));
  }
}

function replaceArray(array: Y.Array<unknown>, next: JsonValue[]): void {
  const items = array.toArray();
  const { start, oldEnd, newEnd } = middle(items.length, next.length, (i, j) => sameValue(items[i], next[j]));
  if (oldEnd > start) array.delete(start, oldEnd - start);
  if (newEnd > start) array.insert(start, next.slice(start, newEnd).map(toYValue));
}

/** Children compare by their canonical string form: equal strings are equal content. */
function replaceXml(fragment: Y.XmlFragment, nodes: XmlNode[]): void {
  const current = fragment.toArray().map((child) => xmlString(child));
  const wanted = nodes.map((node) => serializeXml([node]));
  const { start, oldEnd, newEnd } = middle(current.length, wanted.length, (i, j) => current[i] === wanted[j]);
  if (oldEnd > start) fragment.delete(start, oldEnd - start);
  if (newEnd > start) fragment.insert(start, nodes.slice(start, newEnd).map(toYXml));
}

/**
 * The state after replacing the content of the root with `data`, through Yjs operations on the stored document:
 * a client that loaded `state` converges to `data` by applying the result (or the diff from its state vector),
 * and keeps its own concurrent edits outside the changed ranges. Throws InvalidArgumentError for XML that does
 * not parse.
 */
export function replaceContent(state: Uint8Array, type: CrdtType, contentKey: string, data: JsonValue): Uint8Array {
  return replacementOf(state, type, contentKey, data).state;
}

/**
 * replaceContent, with the replacement also as a Yjs update of its own (`delta`: what the replacing operations
 * add, for a client or a store that has `state`, or any state it merges with, to apply).
 */
export function replacementOf(state: Uint8Array, type: CrdtType, contentKey: string, data: JsonValue): { state: Uint8Array; delta: Uint8Array } {
  const doc = load(state);
  const before = Y.encodeStateVector(doc);
  const nodes = type === 'xml' ? parsedXml(data as string) : [];
  doc.transact(() => {
    switch (type) {
      case 'text': {
        const text = doc.getText(contentKey);
        const { index, remove, insert } = textChange(text.toString(), data as string);
        if (remove > 0) text.delete(index, remove);
        if (insert !== '') text.insert(index, insert);
        break;
      }
      case 'map':
        replaceMap(doc.getMap(contentKey), data as JsonObject);
        break;
      case 'array':
        replaceArray(doc.getArray(contentKey), data as JsonValue[]);
        break;
      case 'xml':
        replaceXml(doc.getXmlFragment(contentKey), nodes);
        break;
    }
  });
  return { state: Y.encodeStateAsUpdate(doc), delta: Y.encodeStateAsUpdate(doc, before) };
}

/**
 * The state after merging a client's Yjs update (V1 encoding, as Y.encodeStateAsUpdate writes it). Throws
 * InvalidArgumentError when the update does not decode, or when the merged content cannot be read back.
 */
export function mergeUpdate(state: Uint8Array, update: Uint8Array, type: CrdtType, contentKey: string): Uint8Array {
  const doc = load(state);
  try {
    Y.applyUpdate(doc, update);
  } catch {
    throw new InvalidArgumentError('yjsUpdate is not a valid Yjs update.');
  }
  rootValue(doc, type, contentKey);
  return Y.encodeStateAsUpdate(doc);
}

// ---------------------------------------------------------------------------------------------------------------
// Operations

export interface CrdtContentInput {
  organizationId: string;
  documentId: string;
  editorId?: string;
  type?: CrdtType;
  data?: unknown;
  contentKey?: string;
  userId?: string;
}

export interface CrdtUpdateInput extends CrdtContentInput {
  /** A client's Yjs update, base64. */
  yjsUpdate?: string;
}

/** The record of Get CRDT Data; `state`, `type` and `contentKey` only with `format: 'yjs'`. */
export interface CrdtRecord {
  data: JsonValue;
  id: string;
  lastUpdate: string;
  lastUpdatedBy: string | null;
  sessionId: null;
  state?: string;
  type?: CrdtType;
  contentKey?: string;
}

function checkStateSize(state: Uint8Array): Uint8Array {
  if (state.length > MAX_STATE_BYTES) {
    throw new InvalidArgumentError(`The CRDT state would exceed the limit of ${MAX_STATE_BYTES} bytes.`);
  }
  return state;
}

/** Sends an editor's writes with the document's migration-lock check in the same transaction. */
const guardedBy = (apiKeyId: string, organizationId: string, documentId: string): TransactionWriter => (items) =>
  transactGuarded(apiKeyId, items, documentsIn(organizationId, [documentId]));

/**
 * Creates the editor's data. The organization and document are created when missing (like a first write in an
 * editor), so the data is listed with its document and moves with it. Throws InvalidArgumentError for the
 * input rules, AlreadyExistsError when the editor already has data, FailedPreconditionError when the document
 * is being migrated.
 */
export async function addCrdtData(apiKeyId: string, input: CrdtContentInput, now = Date.now()): Promise<void> {
  const editorId = checkEditorId(input.editorId);
  const { type, data } = checkContent(input.type, input.data);
  const contentKey = input.contentKey ?? DEFAULT_CONTENT_KEY;
  const state = checkStateSize(buildState(type, contentKey, data));
  const { organizationId, documentId } = input;
  const structure = (await getDocument(apiKeyId, organizationId, documentId))
    ? []
    : [ensureOrganizationItem(apiKeyId, organizationId, now), upsertDocumentItem(apiKeyId, organizationId, documentId, {}, now)];
  const editor = { organizationId, documentId, editorId, type, contentKey, state, lastUpdate: new Date(now).toISOString(), lastUpdatedBy: input.userId ?? null };
  if (!(await createEditor(apiKeyId, editor, structure, guardedBy(apiKeyId, organizationId, documentId)))) {
    throw new AlreadyExistsError('CRDT data already exists for this editor ID.');
  }
}

/** The base64 text of a Yjs update, decoded; canonical base64 only, so a typo is an error rather than other bytes. */
function decodeUpdate(base64: string): Uint8Array {
  const bytes = Buffer.from(base64, 'base64');
  if (base64 === '' || bytes.toString('base64') !== base64) throw new InvalidArgumentError('yjsUpdate must be a base64-encoded Yjs update.');
  return bytes;
}

/**
 * Replaces the editor's content (`type` + `data`, applied as Yjs operations) or merges a client's `yjsUpdate`.
 * Concurrent updates of one editor all succeed and merge as Yjs merges concurrent edits (shared/db/crdt.ts): a
 * replacement is the set of operations that turns the content it read into `data`, so replacements running at the
 * same time merge like two clients' edits, and one that starts after another answered makes the content exactly
 * its `data`. `type` must be the stored one, and `contentKey`, when given, too. Throws InvalidArgumentError for the
 * input rules, NotFoundError when the editor has no data, FailedPreconditionError when the document is being
 * migrated.
 */
export async function updateCrdtData(apiKeyId: string, input: CrdtUpdateInput, now = Date.now()): Promise<void> {
  const ref: EditorRef = { organizationId: input.organizationId, documentId: input.documentId, editorId: checkEditorId(input.editorId) };
  await assertDocumentsWritable(apiKeyId, documentsIn(ref.organizationId, [ref.documentId]));
  // The change to the editor's whole state (deltas included), and the same change as an update of its own.
  let change: (current: StoredEditor, state: Uint8Array) => { state: Uint8Array; delta: Uint8Array };
  if (input.yjsUpdate !== undefined) {
    if (input.type !== undefined || input.data !== undefined) throw new InvalidArgumentError('Provide either yjsUpdate or type and data, not both.');
    const update = decodeUpdate(input.yjsUpdate);
    change = (current, state) => ({ state: mergeUpdate(state, update, current.type, current.contentKey), delta: update });
  } else {
    const { type, data } = checkContent(input.type, input.data);
    change = (current, state) => {
      if (type !== current.type) throw new InvalidArgumentError(`Type must be ${current.type}, the type this editor was created with.`);
      if (input.contentKey !== undefined && input.contentKey !== current.contentKey) {
        throw new InvalidArgumentError(`contentKey must be ${current.contentKey}, the key this editor was created with.`);
      }
      return replacementOf(state, type, current.contentKey, data);
    };
  }
  const lastUpdate = new Date(now).toISOString();
  const updated = await updateEditor(
    apiKeyId,
    ref,
    (current) => {
      const next = change(current, editorState(current));
      return { state: checkStateSize(next.state), delta: next.delta, lastUpdate, lastUpdatedBy: input.userId ?? null };
    },
    guardedBy(apiKeyId, ref.organizationId, ref.documentId),
  );
  if (updated === undefined) throw new NotFoundError('CRDT data not found for this editor ID.');
}

function toRecord(editor: StoredEditor, format: 'json' | 'yjs'): CrdtRecord {
  const state = editorState(editor);
  const record: CrdtRecord = {
    data: readValue(state, editor.type, editor.contentKey),
    id: editor.editorId,
    lastUpdate: editor.lastUpdate,
    lastUpdatedBy: editor.lastUpdatedBy,
    sessionId: editor.sessionId,
  };
  if (format === 'yjs') Object.assign(record, { state: Buffer.from(state).toString('base64'), type: editor.type, contentKey: editor.contentKey });
  return record;
}

/**
 * The CRDT data of one editor (an empty array when it has none) or of every editor of the document. Throws
 * ServiceError OUT_OF_RANGE when the records would not fit a response.
 */
export async function getCrdtData(
  apiKeyId: string,
  input: { organizationId: string; documentId: string; editorId?: string; format?: 'json' | 'yjs' },
): Promise<CrdtRecord[]> {
  const { organizationId, documentId, editorId } = input;
  const editors = editorId === undefined
    ? await listEditors(apiKeyId, organizationId, documentId)
    : [await getEditor(apiKeyId, { organizationId, documentId, editorId })].filter((editor) => editor !== undefined);
  const records = editors.map((editor) => toRecord(editor, input.format ?? 'json'));
  if (Buffer.byteLength(JSON.stringify(JSON.stringify(records))) > MAX_RESPONSE_BYTES) {
    throw new ServiceError('OUT_OF_RANGE', 'The CRDT data requested exceeds the response size limit; read one editor at a time, in format json.');
  }
  return records;
}
