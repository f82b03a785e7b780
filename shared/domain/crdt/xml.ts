/**
 * XML content of an editor: a strict parser for fragments, the canonical string form (one serializer for parsed
 * nodes and Yjs XML types alike, so the two compare equal), and parsed nodes as Yjs XML types. Pure functions.
 *
 * Rules where the contract is silent (also in docs/project-decisions.md): XML is parsed strictly (well-formed fragment: several
 * roots and top-level text allowed; entities, CDATA; comments and processing instructions dropped; DOCTYPE
 * refused). Its string form is canonical: attributes sorted by name, empty elements as `<x></x>` (as Yjs writes
 * them), text and attribute values escaped, element names with their case kept. Elements nest at most MAX_DEPTH
 * levels.
 */
import * as Y from 'yjs';
import { InvalidArgumentError } from '../../core/errors';
import { MAX_DEPTH, isObject, tooDeep } from './json-value';

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
      if (element?.name !== name)
        throw fail(element ? `</${name}> does not close <${element.name}>` : `</${name}> closes no element`);
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
        if (element.attributes.some(([existing]) => existing === attribute))
          throw fail(`duplicate attribute ${attribute}`);
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
const attributeText = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

function elementString(name: string, attributes: Iterable<[string, unknown]>, inner: string): string {
  const sorted = [...attributes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const rendered = sorted
    .map(([attribute, value]) => ` ${attribute}="${escapeAttribute(attributeText(value))}"`)
    .join('');
  return `<${name}${rendered}>${inner}</${name}>`;
}

/** The canonical string form of parsed nodes (the same form xmlString gives for the Yjs types they build). */
export function serializeXml(nodes: readonly XmlNode[], depth = 0): string {
  if (depth > MAX_DEPTH) throw tooDeep();
  return nodes
    .map((node) =>
      node.kind === 'text'
        ? escapeText(node.text)
        : elementString(node.name, node.attributes, serializeXml(node.children, depth + 1)),
    )
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
  const inner = node
    .toArray()
    .map((child) => xmlString(child, depth + 1))
    .join('');
  return node instanceof Y.XmlElement
    ? elementString(node.nodeName, Object.entries(node.getAttributes()), inner)
    : inner;
}

/** A parsed node as a Yjs XML type (preliminary, integrated on insert). */
export function toYXml(node: XmlNode): Y.XmlElement | Y.XmlText {
  if (node.kind === 'text') return new Y.XmlText(node.text);
  const element = new Y.XmlElement(node.name);
  for (const [attribute, value] of node.attributes) element.setAttribute(attribute, value);
  element.insert(0, node.children.map(toYXml));
  return element;
}
