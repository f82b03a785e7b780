/**
 * The ProseMirror schema of xml editors' content (docs/decisions.md §15): Tiptap StarterKit's node and mark names and
 * attributes (plus image, table, link and underline, as Tiptap's own extensions name them), with the HTML parse and
 * render rules Tiptap gives them, so that a Tiptap editor bound to the same Y.XmlFragment reads what the service
 * writes.
 *
 * A stored document may hold nodes and marks of other extensions (a mention, a highlight) or attributes this schema
 * does not know: `readingSchema` extends the schema with them, so reads never drop them silently. HTML renders an
 * unknown node or mark as an element of its own name with its attributes as `data-` attributes.
 */
import {
  Schema,
  type AttributeSpec,
  type DOMOutputSpec,
  type MarkSpec,
  type Mark,
  type Node,
  type NodeSpec,
} from 'prosemirror-model';

const orNull = (value: string | null | undefined) => (value === undefined || value === '' ? null : value);
const positiveInt = (value: string | null, fallback: number) => {
  const parsed = Number(value);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : fallback;
};

/** Table cells' attributes and their HTML, as Tiptap's TableCell and TableHeader have them. */
const cellAttrs = { colspan: { default: 1 }, rowspan: { default: 1 }, colwidth: { default: null } };
function cellSpec(tag: 'td' | 'th'): NodeSpec {
  return {
    content: 'block+',
    attrs: cellAttrs,
    tableRole: tag === 'th' ? 'header_cell' : 'cell',
    isolating: true,
    parseDOM: [
      {
        tag,
        getAttrs: (dom) => {
          const widths = (dom.getAttribute('colwidth') ?? '')
            .split(',')
            .map(Number)
            .filter((width: number) => width > 0);
          return {
            colspan: positiveInt(dom.getAttribute('colspan'), 1),
            rowspan: positiveInt(dom.getAttribute('rowspan'), 1),
            colwidth: widths.length > 0 ? widths : null,
          };
        },
      },
    ],
    toDOM: (node) => {
      const attrs: Record<string, string> = {};
      if (node.attrs.colspan !== 1) attrs.colspan = String(node.attrs.colspan);
      if (node.attrs.rowspan !== 1) attrs.rowspan = String(node.attrs.rowspan);
      if (Array.isArray(node.attrs.colwidth)) attrs.colwidth = node.attrs.colwidth.join(',');
      return [tag, attrs, 0];
    },
  };
}

const nodes: Record<string, NodeSpec> = {
  doc: { content: 'block+' },
  paragraph: { group: 'block', content: 'inline*', parseDOM: [{ tag: 'p' }], toDOM: () => ['p', 0] },
  text: { group: 'inline' },
  heading: {
    group: 'block',
    content: 'inline*',
    defining: true,
    attrs: { level: { default: 1 } },
    parseDOM: [1, 2, 3, 4, 5, 6].map((level) => ({ tag: `h${level}`, attrs: { level } })),
    toDOM: (node) => [`h${node.attrs.level}`, 0],
  },
  blockquote: {
    group: 'block',
    content: 'block+',
    defining: true,
    parseDOM: [{ tag: 'blockquote' }],
    toDOM: () => ['blockquote', 0],
  },
  bulletList: { group: 'block list', content: 'listItem+', parseDOM: [{ tag: 'ul' }], toDOM: () => ['ul', 0] },
  orderedList: {
    group: 'block list',
    content: 'listItem+',
    attrs: { start: { default: 1 } },
    parseDOM: [
      { tag: 'ol', getAttrs: (dom) => ({ start: dom.hasAttribute('start') ? Number(dom.getAttribute('start')) : 1 }) },
    ],
    toDOM: (node) => (node.attrs.start === 1 ? ['ol', 0] : ['ol', { start: String(node.attrs.start) }, 0]),
  },
  listItem: { content: 'paragraph block*', defining: true, parseDOM: [{ tag: 'li' }], toDOM: () => ['li', 0] },
  codeBlock: {
    group: 'block',
    content: 'text*',
    marks: '',
    code: true,
    defining: true,
    attrs: { language: { default: null } },
    parseDOM: [
      {
        tag: 'pre',
        preserveWhitespace: 'full',
        getAttrs: (dom) => {
          const classes = (dom.firstElementChild?.getAttribute('class') ?? '').split(/\s+/);
          return {
            language: orNull(classes.find((name: string) => name.startsWith('language-'))?.slice('language-'.length)),
          };
        },
      },
    ],
    toDOM: (node) => ['pre', ['code', node.attrs.language ? { class: `language-${node.attrs.language}` } : {}, 0]],
  },
  hardBreak: {
    group: 'inline',
    inline: true,
    selectable: false,
    leafText: () => '\n',
    parseDOM: [{ tag: 'br' }],
    toDOM: () => ['br'],
  },
  horizontalRule: { group: 'block', parseDOM: [{ tag: 'hr' }], toDOM: () => ['hr'] },
  image: {
    group: 'block',
    draggable: true,
    attrs: { src: { default: null }, alt: { default: null }, title: { default: null } },
    leafText: (node) => node.attrs.alt ?? '',
    parseDOM: [
      {
        tag: 'img[src]',
        getAttrs: (dom) => ({
          src: dom.getAttribute('src'),
          alt: orNull(dom.getAttribute('alt')),
          title: orNull(dom.getAttribute('title')),
        }),
      },
    ],
    toDOM: (node) => ['img', Object.fromEntries(Object.entries(node.attrs).filter(([, value]) => value !== null))],
  },
  table: {
    group: 'block',
    content: 'tableRow+',
    tableRole: 'table',
    isolating: true,
    parseDOM: [{ tag: 'table' }],
    toDOM: () => ['table', ['tbody', 0]],
  },
  tableRow: {
    content: '(tableCell | tableHeader)*',
    tableRole: 'row',
    parseDOM: [{ tag: 'tr' }],
    toDOM: () => ['tr', 0],
  },
  tableCell: cellSpec('td'),
  tableHeader: cellSpec('th'),
};

/** Tiptap's Link defaults: links open in a new tab, without passing the referrer. */
const LINK_DEFAULTS = { target: '_blank', rel: 'noopener noreferrer nofollow' };

const marks: Record<string, MarkSpec> = {
  link: {
    inclusive: false,
    attrs: {
      href: { default: null },
      target: { default: LINK_DEFAULTS.target },
      rel: { default: LINK_DEFAULTS.rel },
      class: { default: null },
    },
    parseDOM: [
      {
        tag: 'a[href]',
        getAttrs: (dom) => ({
          href: dom.getAttribute('href'),
          target: dom.getAttribute('target'),
          rel: dom.getAttribute('rel'),
          class: dom.getAttribute('class'),
        }),
      },
    ],
    toDOM: (mark) => ['a', Object.fromEntries(Object.entries(mark.attrs).filter(([, value]) => value !== null)), 0],
  },
  bold: {
    parseDOM: [{ tag: 'strong' }, { tag: 'b', getAttrs: (dom) => dom.style?.fontWeight !== 'normal' && null }],
    toDOM: () => ['strong', 0],
  },
  code: { excludes: '_', code: true, parseDOM: [{ tag: 'code' }], toDOM: () => ['code', 0] },
  italic: { parseDOM: [{ tag: 'em' }, { tag: 'i' }], toDOM: () => ['em', 0] },
  strike: { parseDOM: [{ tag: 's' }, { tag: 'del' }, { tag: 'strike' }], toDOM: () => ['s', 0] },
  underline: { parseDOM: [{ tag: 'u' }], toDOM: () => ['u', 0] },
};

/** The schema content is written in: content that does not fit it is refused (no unknown node or mark). */
export const schema = new Schema({ nodes, marks });

/** The JSON form of a ProseMirror node, as y-prosemirror and Node.toJSON write it. */
export interface NodeJson {
  type: string;
  attrs?: Record<string, unknown>;
  content?: NodeJson[];
  marks?: Array<{ type: string; attrs?: Record<string, unknown> }>;
  text?: string;
}

/** A node or mark (or an attribute of a known one) that the schema does not name, as a stored document holds it. */
interface Unknown {
  attrs: Set<string>;
  /** Nodes: found among inline content (beside text, or in a textblock). */
  inline: boolean;
  /** Nodes: holds text or inline nodes. */
  textblock: boolean;
  /** Nodes: has children. */
  hasContent: boolean;
}

/** HTML of a node or mark the schema did not know: an element of its own name, its attributes as `data-` ones. */
function unknownDom(name: string, attrs: Record<string, unknown>, leaf: boolean): DOMOutputSpec {
  const dataAttrs: Record<string, string> = {};
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined)
      dataAttrs[`data-${key}`] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  // An element name HTML can hold: letters, digits and hyphens, starting with a letter.
  const tag = /^[A-Za-z][A-Za-z0-9-]*$/.test(name) ? name : `x-${name.replace(/[^A-Za-z0-9-]/g, '-')}`;
  return leaf ? [tag, dataAttrs] : [tag, dataAttrs, 0];
}

const nullDefaults = (names: Iterable<string>): Record<string, AttributeSpec> =>
  Object.fromEntries([...names].map((name) => [name, { default: null }]));

function note(table: Map<string, Unknown>, name: string): Unknown {
  let entry = table.get(name);
  if (entry === undefined) {
    entry = { attrs: new Set(), inline: false, textblock: false, hasContent: false };
    table.set(name, entry);
  }
  return entry;
}

/**
 * The schema to read `doc` with: `schema` itself when it knows every node, mark and attribute in it, else `schema`
 * extended with what it does not know (the unknown node as inline when it sits in inline content, a textblock when
 * it holds text). Iterative: a document nests deeply at most as the request depth limit allowed its writer.
 */
export function readingSchema(doc: NodeJson): Schema {
  const unknownNodes = new Map<string, Unknown>();
  const unknownMarks = new Map<string, Unknown>();
  const extraAttrs = new Map<string, Set<string>>();
  const stack: Array<{ node: NodeJson; inlineParent: boolean }> = [{ node: doc, inlineParent: false }];
  while (stack.length > 0) {
    const { node, inlineParent } = stack.pop()!;
    const known = schema.nodes[node.type];
    const children = Array.isArray(node.content) ? node.content : [];
    const holdsInline = children.some((child) => child.type === 'text' || schema.nodes[child.type]?.isInline === true);
    if (known === undefined) {
      const entry = note(unknownNodes, node.type);
      for (const key of Object.keys(node.attrs ?? {})) entry.attrs.add(key);
      entry.inline ||= inlineParent;
      entry.textblock ||= holdsInline;
      entry.hasContent ||= children.length > 0;
    } else {
      for (const key of Object.keys(node.attrs ?? {})) {
        if (!(key in (known.spec.attrs ?? {})))
          extraAttrs.set(node.type, (extraAttrs.get(node.type) ?? new Set()).add(key));
      }
    }
    for (const mark of node.marks ?? []) {
      if (schema.marks[mark.type] === undefined) {
        const entry = note(unknownMarks, mark.type);
        for (const key of Object.keys(mark.attrs ?? {})) entry.attrs.add(key);
      } else {
        const knownAttrs = schema.marks[mark.type].spec.attrs ?? {};
        for (const key of Object.keys(mark.attrs ?? {})) {
          if (!(key in knownAttrs))
            extraAttrs.set(`mark:${mark.type}`, (extraAttrs.get(`mark:${mark.type}`) ?? new Set()).add(key));
        }
      }
    }
    const textblock = holdsInline || (known?.isTextblock ?? false);
    for (const child of children) stack.push({ node: child, inlineParent: textblock });
  }
  if (unknownNodes.size === 0 && unknownMarks.size === 0 && extraAttrs.size === 0) return schema;

  let nodeSpecs = schema.spec.nodes;
  let markSpecs = schema.spec.marks;
  for (const [key, attrs] of extraAttrs) {
    const [kind, name] = key.startsWith('mark:') ? ['mark', key.slice(5)] : ['node', key];
    if (kind === 'node') {
      const spec = nodeSpecs.get(name)!;
      nodeSpecs = nodeSpecs.update(name, { ...spec, attrs: { ...spec.attrs, ...nullDefaults(attrs) } });
    } else {
      const spec = markSpecs.get(name)!;
      markSpecs = markSpecs.update(name, { ...spec, attrs: { ...spec.attrs, ...nullDefaults(attrs) } });
    }
  }
  for (const [name, entry] of unknownNodes) {
    const leaf = !entry.hasContent;
    nodeSpecs = nodeSpecs.addToEnd(name, {
      group: entry.inline ? 'inline' : 'block',
      inline: entry.inline,
      content: leaf ? undefined : entry.textblock ? 'inline*' : 'block*',
      attrs: nullDefaults(entry.attrs),
      // Plain text keeps an unknown leaf's text attribute when it has one (a mention's label).
      leafText: (node: Node) => String(node.attrs.label ?? node.attrs.text ?? ''),
      toDOM: (node: Node) => unknownDom(name, node.attrs, leaf),
    });
  }
  for (const [name, entry] of unknownMarks) {
    markSpecs = markSpecs.addToEnd(name, {
      attrs: nullDefaults(entry.attrs),
      toDOM: (mark: Mark) => unknownDom(name, mark.attrs, false),
    });
  }
  return new Schema({ nodes: nodeSpecs, marks: markSpecs, topNode: 'doc' });
}
