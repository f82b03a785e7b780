/**
 * Editor content as Yjs states, in pure functions (state in, state or value out): build a state from a value,
 * read the value of a state, replace the content through Yjs operations, merge a client's update. Each editor's
 * content is a real Yjs document with one root of the editor's type under its content key, so an editor using
 * Yjs can load the stored state as it is.
 *
 * Rules where the contract is silent (also in docs/project-decisions.md):
 * - map and array values become nested Y types: objects are Y.Map, arrays Y.Array, other JSON values are stored
 *   as they are; so two clients editing different keys of a nested object merge instead of overwriting.
 * - A replacement changes only what differs: text by one delete and one insert between the common prefix and
 *   suffix (never splitting a surrogate pair), maps key by key (recursing into nested maps and arrays), arrays
 *   and XML children by replacing the differing middle run. Concurrent client edits elsewhere in the content
 *   survive.
 */
import { isDeepStrictEqual } from 'node:util';
import * as Y from 'yjs';
import type { CrdtType, StoredEditor } from '../../db/crdt';
import { InvalidArgumentError } from '../../core/errors';
import { MAX_DEPTH, isObject, tooDeep, type JsonObject, type JsonValue } from './json-value';
import { parseXml, serializeXml, toYXml, xmlString, type XmlNode } from './xml';

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
 * An editor's content as a plain value, with its type: text and xml a string (xml in its canonical string form),
 * map an object, array an array.
 */
export type CrdtContent =
  | { type: 'text'; data: string }
  | { type: 'xml'; data: string }
  | { type: 'map'; data: JsonObject }
  | { type: 'array'; data: JsonValue[] };

/** The plain value of an editor's content: what Get CRDT Data answers as `data`. */
export type CrdtValue = CrdtContent['data'];

/**
 * The plain JSON value of Yjs content, whatever a client stored in it. Object.fromEntries keeps a `__proto__`
 * key as data (Yjs's toJSON would drop it). Throws InvalidArgumentError beyond MAX_DEPTH.
 */
function plain(value: unknown, depth: number): JsonValue {
  if (depth > MAX_DEPTH) throw tooDeep();
  if (value instanceof Y.XmlFragment || value instanceof Y.XmlText || value instanceof Y.XmlHook)
    return xmlString(value, depth);
  if (value instanceof Y.Text) return value.toString();
  if (value instanceof Y.Map) return plainMap(value, depth);
  if (value instanceof Y.Array) return plainArray(value, depth);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  // A subdocument is a document of its own, not content of this one.
  if (value instanceof Y.Doc) return null;
  if (Array.isArray(value)) return value.map((item) => plain(item, depth + 1));
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item, depth + 1)]));
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return null;
}

/** A Y.Map's plain value (`depth`: its own, see plain). */
const plainMap = (map: Y.Map<unknown>, depth: number): JsonObject =>
  Object.fromEntries([...map.entries()].map(([key, item]) => [key, plain(item, depth + 1)]));

/** A Y.Array's plain value (`depth`: its own, see plain). */
const plainArray = (array: Y.Array<unknown>, depth: number): JsonValue[] =>
  array.toArray().map((item) => plain(item, depth + 1));

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

function rootContent(doc: Y.Doc, type: CrdtType, contentKey: string): CrdtContent {
  switch (type) {
    case 'text':
      return { type, data: doc.getText(contentKey).toString() };
    case 'map':
      return { type, data: plainMap(doc.getMap(contentKey), 0) };
    case 'array':
      return { type, data: plainArray(doc.getArray(contentKey), 0) };
    case 'xml':
      return { type, data: xmlString(doc.getXmlFragment(contentKey)) };
  }
}

/**
 * The nodes of xml `data`: `parsedXml` when the caller has parsed it already (checkContent returns them, so that
 * a request parses a large fragment, its most expensive step, only once), else parsed here. Throws
 * InvalidArgumentError for XML that does not parse.
 */
const xmlNodes = (data: JsonValue, parsedXml: readonly XmlNode[] | undefined) => parsedXml ?? parseXml(data as string);

/**
 * The Yjs state (encodeStateAsUpdate) of a new document holding `data` in a root of `type` under `contentKey`
 * (`parsedXml`: see xmlNodes). Throws InvalidArgumentError for XML that does not parse.
 */
export function buildState(
  type: CrdtType,
  contentKey: string,
  data: JsonValue,
  parsedXml?: readonly XmlNode[],
): Uint8Array {
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
        doc.getXmlFragment(contentKey).insert(0, xmlNodes(data, parsedXml).map(toYXml));
        break;
    }
  });
  return Y.encodeStateAsUpdate(doc);
}

/** The content of a state, as a plain value with its type (CrdtContent). */
export function readContent(state: Uint8Array, type: CrdtType, contentKey: string): CrdtContent {
  return rootContent(load(state), type, contentKey);
}

/**
 * A text editor's content as its Y.Text delta (`[{insert, attributes?}]`, formatting attributes included); embeds
 * as their plain JSON value.
 */
export function textDelta(
  state: Uint8Array,
  contentKey: string,
): Array<{ insert: JsonValue; attributes?: JsonObject }> {
  const delta = load(state).getText(contentKey).toDelta() as Array<{
    insert: unknown;
    attributes?: Record<string, unknown>;
  }>;
  return delta.map(({ insert, attributes }) => ({
    insert: typeof insert === 'string' ? insert : plain(insert, 1),
    ...(attributes === undefined ? {} : { attributes: plainMapOf(attributes) }),
  }));
}

const plainMapOf = (attributes: Record<string, unknown>): JsonObject =>
  Object.fromEntries(Object.entries(attributes).map(([key, value]) => [key, plain(value, 1)]));

/** The plain value of a state: a string for text and xml (its canonical string form), an object, or an array. */
export function readValue(state: Uint8Array, type: CrdtType, contentKey: string): CrdtValue {
  return readContent(state, type, contentKey).data;
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
  let { start, oldEnd, newEnd } = middle(
    previous.length,
    next.length,
    (i, j) => previous.charCodeAt(i) === next.charCodeAt(j),
  );
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
function replaceXml(fragment: Y.XmlFragment, nodes: readonly XmlNode[]): void {
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
 * add, for a client or a store that has `state`, or any state it merges with, to apply). `parsedXml`: see
 * xmlNodes.
 */
export function replacementOf(
  state: Uint8Array,
  type: CrdtType,
  contentKey: string,
  data: JsonValue,
  parsedXml?: readonly XmlNode[],
): { state: Uint8Array; delta: Uint8Array } {
  const doc = load(state);
  const before = Y.encodeStateVector(doc);
  const nodes = type === 'xml' ? xmlNodes(data, parsedXml) : [];
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
  rootContent(doc, type, contentKey);
  return Y.encodeStateAsUpdate(doc);
}
