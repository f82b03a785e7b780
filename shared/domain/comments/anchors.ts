/**
 * Anchors of comment threads in an editor's content (docs/decisions.md §16): where in a Yjs editor a thread is
 * anchored, made by the client (base64 `Y.encodeRelativePosition`) or by the service from an index and length, and
 * where that anchor is now. Pure: a state (or a Y.Doc decoded once for several calls) in, values out; no I/O.
 *
 * Positions are offsets in the editor's plain text: for `xml` editors the §15 `text` format (formats/index.ts
 * renders it with ProseMirror's textBetween: one blank line between blocks, a hard break as a line break, an image
 * as its alt text, an unknown leaf as its `label` or `text` attribute), for `text` editors the Y.Text's string. The
 * text is produced here by walking the Yjs content directly, node by node as textBetween walks the ProseMirror
 * document y-prosemirror makes of it, so an anchor's `start`/`end` index exactly what `crdt/get` `format: "text"`
 * answers (the unit tests compare both), without loading ProseMirror.
 *
 * Rules (also in docs/project-decisions.md, "Comment anchors"):
 * - The service makes `from` with assoc 0 (it sticks to the first anchored character: text typed just before the
 *   anchor stays outside) and `to` with assoc -1 (it sticks to the last anchored character: text typed just after
 *   stays outside). Text typed inside widens the anchor; deleting part of it shrinks it. Comment highlights behave
 *   so (a non-inclusive mark on both edges).
 * - When an edge's character was deleted, `from` moves forward to the next character still there and `to` back to
 *   the end of the last one before it, so an anchor never starts or ends with the blank line between blocks.
 * - Orphaned: an anchor made over at least one character now covers none (every anchored character deleted), or an
 *   edge no longer resolves at all (the position names items the state does not hold). An orphaned anchor has no
 *   `start`/`end`; its `quotedText` is the text it quoted when made.
 * - A deleted block's items are collected by Yjs, so an edge inside it no longer resolves; the block's own item
 *   stays in its parent's list. A stored xml anchor keeps the blocks around each edge (StoredAnchor.fromBlocks), and
 *   an edge whose item is gone falls back to the innermost of them still there: the anchor shrinks.
 * - Writing an anchor checks it against the current state: a position that does not decode, or that names items
 *   this editor's content does not hold (another document's, or not yet synced), is INVALID_ARGUMENT naming the
 *   field; index and length beyond the text are OUT_OF_RANGE. Reading never fails on an anchor: it orphans it.
 */
import * as Y from 'yjs';
import type { CrdtType, StoredEditor } from '../../db/crdt';
import { InvalidArgumentError, ServiceError } from '../../core/errors';
import { MAX_POSITION_CHARS, MAX_QUOTE_CHARS } from './anchor-limits';

/** The editor an anchor is in, as its head stores it. */
export interface AnchorEditor {
  editorId: string;
  type: CrdtType;
  contentKey: string;
}

/** What a request may send as a thread's `anchor`: client-made relative positions, or an index and length. */
export type AnchorInput =
  { editorId: string; from: string; to: string } | { editorId: string; index: number; length: number };

/** An anchor as a thread stores it: its positions, and what it covered when made. */
export type StoredAnchor = {
  editorId: string;
  /** base64 of Y.encodeRelativePosition: the anchor's first character. */
  from: string;
  /** base64 of Y.encodeRelativePosition: just after the anchor's last character. */
  to: string;
  /** Characters of plain text covered when made (0: a point anchor, which is never orphaned by deletion). */
  length: number;
  /** The text covered when made (at most MAX_QUOTE_CHARS, then `…`): what an orphaned thread was about. */
  quotedText: string;
  /**
   * xml editors: the blocks around each edge when made (positions before each, innermost first; absent at the top
   * level). When a block is deleted Yjs collects the items inside it, so an edge in it no longer resolves; the block
   * itself stays in its parent's list, so the edge falls back to where the innermost block still there is.
   */
  fromBlocks?: string[];
  toBlocks?: string[];
};

/**
 * An anchor as reads answer it (decisions §16): where it is now, or orphaned (no `start`/`end`). Only these fields:
 * what a thread stores beside them (`length`, `fromBlocks`, `toBlocks`) is never answered.
 */
export type ResolvedAnchor = {
  editorId: string;
  from: string;
  to: string;
  /** The text between start and end (or, orphaned, the text quoted when made), at most MAX_QUOTE_CHARS then `…`. */
  quotedText: string;
} & (
  | {
      /** Offset in the plain text of the anchor's first character. */
      start: number;
      /** Offset in the plain text just after the anchor's last character. */
      end: number;
      orphaned: false;
    }
  | { start?: never; end?: never; orphaned: true }
);

/** The fields of an anchor an error can name. */
export type AnchorField = 'editorId' | 'from' | 'to' | 'index' | 'length';

/** INVALID_ARGUMENT about one field of an anchor (`field`), e.g. a position that does not decode. */
export class InvalidAnchorError extends InvalidArgumentError {
  readonly field: AnchorField;
  constructor(field: AnchorField, message: string) {
    super(message);
    this.name = 'InvalidAnchorError';
    this.field = field;
  }
}

/** OUT_OF_RANGE: `index` or `index + length` lies beyond the editor's plain text. */
export class AnchorOutOfRangeError extends ServiceError {
  readonly field: AnchorField;
  constructor(field: AnchorField, message: string) {
    super('OUT_OF_RANGE', message);
    this.name = 'AnchorOutOfRangeError';
    this.field = field;
  }
}

export { MAX_POSITION_CHARS, MAX_QUOTE_CHARS };

/** The editor types an anchor can be in. */
export const ANCHORABLE_TYPES: readonly CrdtType[] = ['xml', 'text'];

/** Any shared type, as far as the walk reads it (its event type, which differs by kind, is never read here). */
type AnyType = Pick<Y.AbstractType<never>, '_item' | '_start' | '_map' | '_length' | 'doc'>;

const SEPARATOR = '\n\n';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `text` cut to MAX_QUOTE_CHARS (never inside a surrogate pair), with `…` when cut. */
function quote(text: string): string {
  if (text.length <= MAX_QUOTE_CHARS) return text;
  let cut = MAX_QUOTE_CHARS;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return `${text.slice(0, cut)}…`;
}

/** The Y.Doc of `source`: decoded from a state, or the caller's (decoded once for many calls). */
export function anchorDoc(source: Y.Doc | Uint8Array): Y.Doc {
  if (source instanceof Y.Doc) return source;
  const doc = new Y.Doc();
  Y.applyUpdate(doc, source);
  return doc;
}

/**
 * The Y.Doc of a stored editor: its state with its deltas applied in one transaction (what editorState merges,
 * without encoding the merge to decode it again), for resolveAnchors and prepareAnchors to share.
 */
export function editorAnchorDoc(editor: Pick<StoredEditor, 'state' | 'deltas'>): Y.Doc {
  const doc = anchorDoc(editor.state);
  if (editor.deltas.length > 0)
    doc.transact(() => {
      for (const { update } of editor.deltas) Y.applyUpdate(doc, update);
    });
  return doc;
}

/** The editor's root type in `doc`; throws InvalidAnchorError for an editor type anchors cannot be in. */
function rootOf(doc: Y.Doc, editor: AnchorEditor): AnyType {
  if (editor.type === 'xml') return doc.getXmlFragment(editor.contentKey);
  if (editor.type === 'text') return doc.getText(editor.contentKey);
  throw new InvalidAnchorError(
    'editorId',
    `anchor.editorId: editor ${editor.editorId} is of type ${editor.type}; anchors are in xml and text editors.`,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding positions

/** Where a relative position points in the state, before its offset in the text is known. */
type Point =
  /** At an item of a list (a character of a text, or a child of an element): before it (assoc ≥ 0) or after it. */
  | { kind: 'item'; item: Y.Item; diff: number; after: boolean }
  /** At the start or the end of a type's content (a position that names the type and no item). */
  | { kind: 'edge'; type: AnyType; end: boolean };

/** The bytes of a base64 position, or undefined when it is not one. */
function decodePosition(value: unknown): Y.RelativePosition | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_POSITION_CHARS || !BASE64.test(value))
    return undefined;
  const bytes = Buffer.from(value, 'base64');
  let position: Y.RelativePosition;
  let again: Uint8Array;
  try {
    position = Y.decodeRelativePosition(bytes);
    if (position.item === null && position.type === null && position.tname === null) return undefined;
    again = Y.encodeRelativePosition(position);
  } catch {
    return undefined;
  }
  // Decoding reads no further than it needs: re-encoding must give the same bytes (an encoding without the trailing
  // assoc, as Yjs before 13.5 wrote, reads as assoc 0), so trailing garbage or a truncated id is refused.
  const same = (length: number) => bytes.length === length && bytes.every((byte, index) => byte === again[index]);
  if (!(same(again.length) || (position.assoc === 0 && same(again.length - 1)))) return undefined;
  return position;
}

/** The struct holding `id` (following undo's redone items, as Yjs does), or undefined when the state lacks it. */
function findItem(doc: Y.Doc, id: Y.ID): { item: Y.Item; diff: number } | undefined {
  let next: Y.ID | null = id;
  let diff = 0;
  let item: Y.Item | Y.GC | undefined;
  for (let hops = 0; next !== null && hops < 1000; hops += 1) {
    if (Y.getState(doc.store, next.client) <= next.clock) return undefined;
    item = Y.getItem(doc.store, next);
    diff = next.clock - item.id.clock;
    if (!(item instanceof Y.Item)) return undefined;
    next = item.redone === null ? null : Y.createID(item.redone.client, item.redone.clock + diff);
  }
  return item instanceof Y.Item ? { item, diff } : undefined;
}

/** True when `type` is `root` or inside it, each step a child in a list (not a map entry such as an attribute). */
function isWithin(type: AnyType, root: AnyType): boolean {
  let current: AnyType = type;
  for (;;) {
    if (current === root) return true;
    const item = current._item;
    if (item === null || item.parentSub !== null || !(item.parent instanceof Y.AbstractType)) return false;
    current = item.parent;
  }
}

/**
 * The point `position` names in the editor's content: undefined when the state does not hold it (items of another
 * document, or collected after their block's deletion) or it is not in the content (another root, an attribute).
 * A point inside a deleted block becomes the point of that block: where it was.
 */
function pointOf(doc: Y.Doc, root: AnyType, contentKey: string, position: Y.RelativePosition) {
  let point: Point;
  if (position.item !== null) {
    const found = findItem(doc, position.item);
    if (found === undefined || found.item.parentSub !== null || !(found.item.parent instanceof Y.AbstractType))
      return undefined;
    point = { kind: 'item', item: found.item, diff: found.diff, after: position.assoc < 0 };
  } else if (position.tname !== null) {
    if (position.tname !== contentKey) return undefined;
    point = { kind: 'edge', type: root, end: position.assoc >= 0 };
  } else {
    const found = findItem(doc, position.type!);
    if (found === undefined || !(found.item.content instanceof Y.ContentType)) return undefined;
    point = { kind: 'edge', type: found.item.content.type, end: position.assoc >= 0 };
  }
  const parent = point.kind === 'item' ? (point.item.parent as AnyType) : point.type;
  if (!isWithin(parent, root)) return undefined;
  // The outermost deleted block around the point (its content is not rendered): the point is where it was.
  let deleted: Y.Item | undefined;
  for (let type = parent; type !== root; type = type._item!.parent as AnyType) {
    if (type._item!.deleted) deleted = type._item!;
  }
  if (deleted !== undefined) return { kind: 'item', item: deleted, diff: 0, after: false } satisfies Point;
  return point;
}

// ---------------------------------------------------------------------------------------------------------------
// The plain text, walked once

/** How textBetween treats a node (see classify). */
interface NodeClass {
  block: boolean;
  textblock: boolean;
  leaf: boolean;
}

/** Tiptap's nodes as formats/schema.ts defines them; every other name is classified from the document. */
const KNOWN: Record<string, NodeClass> = {
  paragraph: { block: true, textblock: true, leaf: false },
  heading: { block: true, textblock: true, leaf: false },
  codeBlock: { block: true, textblock: true, leaf: false },
  blockquote: { block: true, textblock: false, leaf: false },
  bulletList: { block: true, textblock: false, leaf: false },
  orderedList: { block: true, textblock: false, leaf: false },
  listItem: { block: true, textblock: false, leaf: false },
  table: { block: true, textblock: false, leaf: false },
  tableRow: { block: true, textblock: false, leaf: false },
  tableCell: { block: true, textblock: false, leaf: false },
  tableHeader: { block: true, textblock: false, leaf: false },
  doc: { block: true, textblock: false, leaf: false },
  horizontalRule: { block: true, textblock: false, leaf: true },
  image: { block: true, textblock: false, leaf: true },
  hardBreak: { block: false, textblock: false, leaf: true },
  text: { block: false, textblock: false, leaf: true },
};
const isKnown = (name: string) => Object.hasOwn(KNOWN, name);

/** The text of a leaf node, as the schema's leafText gives it (formats/schema.ts). */
function leafText(element: Y.XmlElement): string {
  const name = element.nodeName;
  if (name === 'hardBreak') return '\n';
  if (name === 'image') return String(element.getAttribute('alt') ?? '');
  if (isKnown(name)) return '';
  const attrs = element.getAttributes() as Record<string, unknown>;
  return String(attrs.label ?? attrs.text ?? '');
}

/** A live child of a list: not deleted, and holding a type (an element or a text). */
const liveType = (item: Y.Item) =>
  !item.deleted && item.content instanceof Y.ContentType ? (item.content.type as AnyType) : undefined;

/** True when a text holds characters (y-prosemirror makes no text node of an empty one). */
function hasText(text: Y.XmlText): boolean {
  for (let item = text._start; item !== null; item = item.right) if (!item.deleted && item.countable) return true;
  return false;
}

/**
 * How each node name reads: Tiptap's as formats/schema.ts defines them; a name Tiptap does not have as its
 * readingSchema decides (from every place it occurs: inline when it sits in inline content, a textblock when it holds
 * text, a leaf when it never holds anything), which takes a pass over the elements: made when the walk first meets
 * such a name, so content of Tiptap's nodes only (the usual case) is walked once.
 */
function nodeClasses(root: Y.XmlFragment): (name: string) => NodeClass {
  let classified: ((name: string) => NodeClass) | undefined;
  return (name) => (isKnown(name) ? KNOWN[name] : (classified ??= classify(root))(name));
}

/** The classes of the names in `root` Tiptap does not have (see nodeClasses). One pass over the elements, iterative. */
function classify(root: Y.XmlFragment): (name: string) => NodeClass {
  const unknown = new Map<string, { inline: boolean; holdsInline: boolean; hasContent: boolean }>();
  const stack: Array<{ type: Y.XmlFragment; inlineParent: boolean }> = [{ type: root, inlineParent: false }];
  while (stack.length > 0) {
    const { type, inlineParent } = stack.pop()!;
    const name = type instanceof Y.XmlElement ? type.nodeName : 'doc';
    const elements: Y.XmlElement[] = [];
    let holdsInline = false;
    let hasContent = false;
    for (let item = type._start; item !== null; item = item.right) {
      const child = liveType(item);
      if (child instanceof Y.XmlText) {
        if (hasText(child)) holdsInline = hasContent = true;
      } else if (child instanceof Y.XmlElement) {
        hasContent = true;
        if (child.nodeName === 'hardBreak' || child.nodeName === 'text') holdsInline = true;
        elements.push(child);
      }
    }
    if (!isKnown(name)) {
      const entry = unknown.get(name) ?? { inline: false, holdsInline: false, hasContent: false };
      entry.inline ||= inlineParent;
      entry.holdsInline ||= holdsInline;
      entry.hasContent ||= hasContent;
      unknown.set(name, entry);
    }
    const textblock = holdsInline || (KNOWN[name]?.textblock ?? false);
    for (const child of elements) stack.push({ type: child, inlineParent: textblock });
  }
  return (name) => {
    if (isKnown(name)) return KNOWN[name];
    const entry = unknown.get(name);
    if (entry === undefined) return { block: true, textblock: false, leaf: true };
    return { block: !entry.inline, textblock: !entry.inline && entry.holdsInline, leaf: !entry.hasContent };
  };
}

/** One endpoint of an anchor being resolved: where it points, and (once the walk passed it) its offset. */
interface Probe {
  point: Point;
  /** `from` moves forward to the next character when its own is gone; `to` back to the end of the last one. */
  side: 'from' | 'to';
  offset?: number;
}

/** A run of plain text made by one item: a text item's characters, or a leaf's text. */
interface Segment {
  start: number;
  end: number;
  item: Y.Item;
  /** Text items: their characters map one to one onto ids; a leaf's text maps onto its one item. */
  text: boolean;
  parent: AnyType;
}

/**
 * The plain text of the editor's content in one walk, resolving `probes` on the way (and, when asked, the segments
 * that map offsets back onto items). Iterative, so no nesting depth exhausts the stack.
 */
class TextWalk {
  private readonly parts: string[] = [];
  /** Characters of plain text so far (all of them once the walk is done). */
  length = 0;
  /** Offset just after the last character of content (text or a leaf's text): where a `to` moves back to. */
  private contentEnd = 0;
  private firstBlock = true;
  /** `from` probes waiting for the next character of content. */
  private pending: Probe[] = [];
  private readonly byItem = new Map<Y.Item, Probe[]>();
  private readonly byType = new Map<AnyType, Probe[]>();
  readonly segments: Segment[] = [];

  constructor(
    probes: readonly Probe[],
    private readonly keepSegments: boolean,
  ) {
    for (const probe of probes) {
      const { point } = probe;
      const [map, key] = point.kind === 'item' ? [this.byItem, point.item] : [this.byType, point.type];
      const list = (map as Map<unknown, Probe[]>).get(key);
      if (list === undefined) (map as Map<unknown, Probe[]>).set(key, [probe]);
      else list.push(probe);
    }
  }

  get text(): string {
    return this.parts.join('');
  }

  /** A probe at a point that is not a live character: `from` waits for the next character, `to` takes the last. */
  private atBoundary(probe: Probe): void {
    if (probe.side === 'from') this.pending.push(probe);
    else probe.offset = this.contentEnd;
  }

  private emit(text: string, item: Y.Item, isText: boolean, parent: AnyType): void {
    if (text.length === 0) return;
    for (const probe of this.pending) probe.offset = this.length;
    this.pending = [];
    if (this.keepSegments)
      this.segments.push({ start: this.length, end: this.length + text.length, item, text: isText, parent });
    this.parts.push(text);
    this.length += text.length;
    this.contentEnd = this.length;
  }

  private separator(): void {
    if (this.firstBlock) this.firstBlock = false;
    else {
      this.parts.push(SEPARATOR);
      this.length += SEPARATOR.length;
    }
  }

  private edge(type: AnyType, end: boolean): void {
    for (const probe of this.byType.get(type) ?? []) {
      if ((probe.point as { end: boolean }).end === end) this.atBoundary(probe);
    }
  }

  /** Probes at a child of a list, before (`after` false) or after it. */
  private atChild(item: Y.Item, after: boolean): void {
    for (const probe of this.byItem.get(item) ?? []) {
      if ((probe.point as { after: boolean }).after === after) this.atBoundary(probe);
    }
  }

  /** A text's characters (a Y.Text, or a Y.XmlText inside an xml editor's content). */
  walkText(text: Y.Text): void {
    this.edge(text, false);
    for (let item = text._start; item !== null; item = item.right) {
      const probes = this.byItem.get(item);
      const chars = !item.deleted && item.content instanceof Y.ContentString ? item.content.str : '';
      if (probes !== undefined) {
        for (const probe of probes) {
          const point = probe.point as Extract<Point, { kind: 'item' }>;
          if (chars.length > 0) probe.offset = this.length + Math.min(point.diff + (point.after ? 1 : 0), chars.length);
          // A deleted character, or an embed or format mark (no plain text): a boundary where it is.
          else this.atBoundary(probe);
        }
      }
      this.emit(chars, item, true, text);
    }
    this.edge(text, true);
  }

  /** An xml editor's content, node by node as ProseMirror's textBetween walks it. */
  walkXml(root: Y.XmlFragment): void {
    const kind = nodeClasses(root);
    type Frame = { type: Y.XmlFragment; item: Y.Item | null };
    const stack: Frame[] = [];
    const enter = (type: Y.XmlFragment) => {
      this.edge(type, false);
      stack.push({ type, item: type._start });
    };
    enter(root);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      const item = frame.item;
      if (item === null) {
        stack.pop();
        this.edge(frame.type, true);
        if (frame.type._item !== null) this.atChild(frame.type._item, true);
        continue;
      }
      frame.item = item.right;
      this.atChild(item, false);
      const child = liveType(item);
      if (child instanceof Y.XmlText) {
        this.walkText(child);
        this.atChild(item, true);
      } else if (child instanceof Y.XmlElement) {
        const node = kind(child.nodeName);
        const leaf = node.leaf ? leafText(child) : '';
        if (node.block && (node.textblock || leaf.length > 0)) this.separator();
        if (leaf.length > 0) this.emit(leaf, item, false, frame.type);
        // textBetween descends into a leaf too, should a stored leaf hold children.
        enter(child);
      } else this.atChild(item, true);
    }
  }

  /** Resolves the probes still waiting for a character: they are at the end. */
  finish(): void {
    for (const probe of this.pending) probe.offset = this.length;
    this.pending = [];
  }
}

/** Walks the editor's content once, resolving `probes`. */
function walk(root: AnyType, probes: readonly Probe[], keepSegments = false): TextWalk {
  const textWalk = new TextWalk(probes, keepSegments);
  if (root instanceof Y.XmlFragment) textWalk.walkXml(root);
  else textWalk.walkText(root as Y.Text);
  textWalk.finish();
  return textWalk;
}

/** The editor's plain text as anchors index it (for an xml editor: decisions §15 `text`). */
export function anchorText(editor: AnchorEditor, source: Y.Doc | Uint8Array): string {
  const doc = anchorDoc(source);
  return walk(rootOf(doc, editor), []).text;
}

// ---------------------------------------------------------------------------------------------------------------
// Making anchors

const encode = (position: Y.RelativePosition) => Buffer.from(Y.encodeRelativePosition(position)).toString('base64');

/** A position at an item: `diff` characters into it; assoc 0 sticks to that character, -1 to the one before. */
function itemPosition(item: Y.Item, diff: number, assoc: 0 | -1): Y.RelativePosition {
  return new Y.RelativePosition(null, null, Y.createID(item.id.client, item.id.clock + diff), assoc);
}

/** `from` at the character at `offset` of a segment, or before a leaf. */
const fromPosition = (segment: Segment, offset: number) =>
  itemPosition(segment.item, segment.text ? offset - segment.start : 0, 0);
/** `to` just after the character at `offset - 1` of a segment, or after a leaf. */
const toPosition = (segment: Segment, offset: number) =>
  itemPosition(segment.item, segment.text ? offset - segment.start - 1 : 0, -1);

/** The first segment ending after `offset` (holding it, or the next), by binary search. */
function segmentAfter(segments: readonly Segment[], offset: number): number {
  let low = 0;
  let high = segments.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (segments[middle].end > offset) high = middle;
    else low = middle + 1;
  }
  return low;
}

/**
 * Relative positions for `length` characters of the plain text from `index` (the service's anchor): `from` at the
 * first character of content in the range, `to` after the last (the blank lines between blocks are no characters of
 * content). A range holding no character of content (length 0, or only blank lines) is a point anchor before the next
 * character (or after the last one, at the end).
 */
function positionsAt(textWalk: TextWalk, contentKey: string, index: number, length: number) {
  const total = textWalk.length;
  if (!Number.isSafeInteger(index) || index < 0 || index > total)
    throw new AnchorOutOfRangeError(
      'index',
      `anchor.index must be from 0 to ${total}, the length of the editor's text.`,
    );
  if (!Number.isSafeInteger(length) || length < 0 || index + length > total)
    throw new AnchorOutOfRangeError(
      'length',
      `anchor.length must be from 0 to ${total - index}: the range must end within the editor's text (${total} characters).`,
    );
  const { segments } = textWalk;
  const first = segmentAfter(segments, index);
  const last = segmentAfter(segments, index + length - 1);
  const hasContent = length > 0 && first < segments.length && segments[first].start < index + length;
  if (hasContent) {
    const lastSegment = segments[Math.min(last, segments.length - 1)];
    const endSegment = lastSegment.start < index + length ? lastSegment : segments[last - 1];
    return {
      from: fromPosition(segments[first], Math.max(index, segments[first].start)),
      to: toPosition(endSegment, Math.min(index + length, endSegment.end)),
    };
  }
  let point: Y.RelativePosition;
  if (first < segments.length) point = fromPosition(segments[first], Math.max(index, segments[first].start));
  else if (segments.length > 0) point = toPosition(segments[segments.length - 1], segments[segments.length - 1].end);
  else point = new Y.RelativePosition(null, contentKey, null, 0);
  return { from: point, to: point };
}

/** Most blocks kept around an edge: the innermost ones, and the outermost (a child of the root is never collected). */
const MAX_BLOCKS = 8;

/** The blocks around the point `value` names (see StoredAnchor.fromBlocks), or undefined at the top level. */
function blocksAround(doc: Y.Doc, root: AnyType, contentKey: string, value: string): string[] | undefined {
  const point = pointOf(doc, root, contentKey, decodePosition(value)!)!;
  const blocks: string[] = [];
  let type = point.kind === 'item' ? (point.item.parent as AnyType) : point.type;
  for (; type !== root && type._item !== null; type = type._item.parent as AnyType)
    blocks.push(encode(itemPosition(type._item, 0, 0)));
  if (blocks.length > MAX_BLOCKS) blocks.splice(MAX_BLOCKS - 1, blocks.length - MAX_BLOCKS);
  return blocks.length > 0 ? blocks : undefined;
}

/** The errors writing an anchor can give (both name the field). */
export type AnchorError = InvalidAnchorError | AnchorOutOfRangeError;

/** The positions `input` names, checked (client-made) or made (index and length; `segments`: the walk to make them). */
function positionsOf(doc: Y.Doc, root: AnyType, editor: AnchorEditor, input: AnchorInput, segments: () => TextWalk) {
  if ('index' in input) {
    const positions = positionsAt(segments(), editor.contentKey, input.index, input.length);
    return { from: encode(positions.from), to: encode(positions.to) };
  }
  for (const field of ['from', 'to'] as const) {
    const position = decodePosition(input[field]);
    if (position === undefined)
      throw new InvalidAnchorError(
        field,
        `anchor.${field} is not a relative position: base64 of Y.encodeRelativePosition, at most ${MAX_POSITION_CHARS} characters.`,
      );
    if (pointOf(doc, root, editor.contentKey, position) === undefined)
      throw new InvalidAnchorError(
        field,
        `anchor.${field} does not point into the content of editor ${editor.editorId} (the position names items its current state does not hold).`,
      );
  }
  return { from: input.from, to: input.to };
}

/**
 * The anchors to store for threads in one editor, checked against its current state (`source`: its state, or a
 * Y.Doc decoded from it once): client-made positions must decode and point into this editor's content (`from` not
 * after `to`); an index and length become positions (see positionsAt). Each result is the stored anchor or the error
 * of that input: InvalidAnchorError (INVALID_ARGUMENT) or AnchorOutOfRangeError (OUT_OF_RANGE), both naming the
 * field. The content is walked at most twice for all of them. `input.editorId` is the caller's to match to `editor`
 * (it looked the editor up by that id).
 */
export function prepareAnchors(
  editor: AnchorEditor,
  source: Y.Doc | Uint8Array,
  inputs: readonly AnchorInput[],
): Array<StoredAnchor | AnchorError> {
  if (inputs.length === 0) return [];
  const doc = anchorDoc(source);
  let root: AnyType;
  try {
    root = rootOf(doc, editor);
  } catch (error) {
    return inputs.map(() => error as InvalidAnchorError);
  }
  let segments: TextWalk | undefined;
  const drafts = inputs.map((input): StoredAnchor | AnchorError => {
    try {
      const positions = positionsOf(doc, root, editor, input, () => (segments ??= walk(root, [], true)));
      return { editorId: editor.editorId, ...positions, length: 0, quotedText: '' };
    } catch (error) {
      if (error instanceof InvalidAnchorError || error instanceof AnchorOutOfRangeError) return error;
      throw error;
    }
  });
  const made = drafts.filter((draft): draft is StoredAnchor => !(draft instanceof ServiceError));
  const { textWalk, offsets } = locate(doc, root, editor.contentKey, made);
  const text = textWalk.text;
  let next = 0;
  return drafts.map((draft) => {
    if (draft instanceof ServiceError) return draft;
    const { from: start, to: end } = offsets[next++];
    if (start === undefined || end === undefined)
      return new InvalidAnchorError('from', `anchor.from does not point into the text of editor ${editor.editorId}.`);
    // Edges at blank lines between blocks may cross (a caret in an empty paragraph); characters between them may not.
    if (end < start && /[^\n]/.test(text.slice(end, start)))
      return new InvalidAnchorError('to', 'anchor.to must not be before anchor.from.');
    const length = Math.max(0, end - start);
    const made: StoredAnchor = { ...draft, length, quotedText: quote(text.slice(start, start + length)) };
    if (editor.type === 'xml') {
      const fromBlocks = blocksAround(doc, root, editor.contentKey, draft.from);
      const toBlocks = blocksAround(doc, root, editor.contentKey, draft.to);
      if (fromBlocks !== undefined) made.fromBlocks = fromBlocks;
      if (toBlocks !== undefined) made.toBlocks = toBlocks;
    }
    return made;
  });
}

/** prepareAnchors for one anchor: the stored anchor, or throws its AnchorError. */
export function prepareAnchor(editor: AnchorEditor, source: Y.Doc | Uint8Array, input: AnchorInput): StoredAnchor {
  const [result] = prepareAnchors(editor, source, [input]);
  if (result instanceof ServiceError) throw result;
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Resolving anchors

/** Where each anchor's edges are in one walk: `from` and `to` offsets, undefined when an edge does not resolve. */
function locate(doc: Y.Doc, root: AnyType, contentKey: string, anchors: readonly StoredAnchor[]) {
  const probes = anchors.map((anchor) =>
    (['from', 'to'] as const).map((side) => {
      const point = [anchor[side], ...(anchor[`${side}Blocks`] ?? [])].reduce<Point | undefined>((found, value) => {
        if (found !== undefined) return found;
        const position = decodePosition(value);
        return position === undefined ? undefined : pointOf(doc, root, contentKey, position);
      }, undefined);
      return point === undefined ? undefined : ({ point, side } satisfies Probe as Probe);
    }),
  );
  const textWalk = walk(
    root,
    probes.flatMap(([from, to]) => (from === undefined || to === undefined ? [] : [from, to])),
  );
  // A probe the walk never reached is in content that is not rendered (a type nested where no node can be).
  const offsets = probes.map(([from, to]) => ({ from: from?.offset, to: to?.offset }));
  return { textWalk, offsets };
}

/**
 * A stored anchor answered as orphaned, with the text it quoted when made: what reads answer for an anchor that no
 * longer resolves, and what the operations answer for an anchor whose editor no longer exists.
 */
export function orphanedAnchor(anchor: StoredAnchor): ResolvedAnchor {
  const { editorId, from, to, quotedText } = anchor;
  return { editorId, from, to, quotedText, orphaned: true };
}

function resolveIn(doc: Y.Doc, root: AnyType, contentKey: string, anchors: readonly StoredAnchor[]): ResolvedAnchor[] {
  const { textWalk, offsets } = locate(doc, root, contentKey, anchors);
  let text: string | undefined;
  return anchors.map((anchor, index) => {
    const { from, to } = offsets[index];
    if (from === undefined || to === undefined) return orphanedAnchor(anchor);
    // An edge that moved over deleted text may pass the other: the anchor then covers nothing.
    const end = Math.max(from, to);
    if (end === from && anchor.length > 0) return orphanedAnchor(anchor);
    text ??= textWalk.text;
    const { editorId } = anchor;
    return {
      editorId,
      from: anchor.from,
      to: anchor.to,
      start: from,
      end,
      quotedText: quote(text.slice(from, end)),
      orphaned: false,
    };
  });
}

/**
 * Where each of `anchors` (all in `editor`) is in the editor's current state (`source`: its state, or a Y.Doc
 * decoded from it once): one walk of the content for all of them. Never throws for an anchor: one that no longer
 * resolves is orphaned (see the module's rules), as is every anchor in an editor whose type holds no text.
 */
export function resolveAnchors(
  editor: AnchorEditor,
  source: Y.Doc | Uint8Array,
  anchors: readonly StoredAnchor[],
): ResolvedAnchor[] {
  if (anchors.length === 0) return [];
  if (!ANCHORABLE_TYPES.includes(editor.type)) return anchors.map(orphanedAnchor);
  const doc = anchorDoc(source);
  return resolveIn(doc, rootOf(doc, editor), editor.contentKey, anchors);
}
