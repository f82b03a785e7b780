/**
 * Markdown of xml editors' content (docs/decisions.md §15): CommonMark with GFM tables and strikethrough, parsed by
 * markdown-it (its default preset has both; raw HTML is off, so `<b>` stays text) into the schema of schema.ts by
 * prosemirror-markdown, and written by prosemirror-markdown's serializer with the rules of that schema's nodes.
 *
 * What Markdown cannot express keeps its text: underline and unknown marks are left unmarked, an unknown node renders
 * its content (or, a leaf, its label), a table cell holding more than one paragraph gets its paragraphs on one line.
 */
import MarkdownIt from 'markdown-it';
import type StateCore from 'markdown-it/lib/rules_core/state_core.mjs';
import {
  MarkdownParser,
  MarkdownSerializer,
  defaultMarkdownSerializer,
  type MarkdownSerializerState,
} from 'prosemirror-markdown';
import { Fragment, type Node, type Schema } from 'prosemirror-model';
import { schema } from './schema';

type NodeSerializer = (state: MarkdownSerializerState, node: Node, parent: Node, index: number) => void;
type MarkSerializer = MarkdownSerializer['marks'][string];

/**
 * GFM table cells hold inline content, Tiptap's cells paragraphs (`block+`): a paragraph is opened around each
 * cell's inline token, or prosemirror-markdown could not fit the text into the cell and would drop it.
 */
function cellParagraphs(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = tokens.length - 1; i > 0; i -= 1) {
    if (tokens[i].type !== 'inline' || (tokens[i - 1].type !== 'th_open' && tokens[i - 1].type !== 'td_open')) continue;
    tokens.splice(i + 1, 0, new state.Token('paragraph_close', 'p', -1));
    tokens.splice(i, 0, new state.Token('paragraph_open', 'p', 1));
  }
}

/**
 * Markdown images are inline, Tiptap's images blocks: a paragraph or heading holding images is split around them
 * (its text before and after stays in blocks of its own kind), or prosemirror-markdown, unable to fit a block into
 * the paragraph, would drop the whole paragraph.
 */
function imageBlocks(state: StateCore): void {
  const tokens = state.tokens;
  for (let i = tokens.length - 2; i > 0; i -= 1) {
    const inline = tokens[i];
    if (inline.type !== 'inline' || !inline.children?.some((child) => child.type === 'image')) continue;
    const open = tokens[i - 1];
    const close = tokens[i + 1];
    const replacement: typeof tokens = [];
    let run: typeof tokens = [];
    const flush = () => {
      // A run of nothing but line breaks and blanks between two images is no paragraph of its own.
      if (
        run.some(
          (child) =>
            !(
              child.type === 'softbreak' ||
              child.type === 'hardbreak' ||
              (child.type === 'text' && child.content.trim() === '')
            ),
        )
      ) {
        const text = Object.assign(new state.Token('inline', '', 0), {
          children: run,
          content: run.map((child) => child.content).join(''),
        });
        replacement.push(
          Object.assign(new state.Token(open.type, open.tag, 1), { attrs: open.attrs, markup: open.markup }),
          text,
          new state.Token(close.type, close.tag, -1),
        );
      }
      run = [];
    };
    for (const child of inline.children) {
      if (child.type === 'image') {
        flush();
        replacement.push(child);
      } else run.push(child);
    }
    flush();
    tokens.splice(i - 1, 3, ...replacement);
  }
}

const markdownIt = new MarkdownIt('default', { html: false, linkify: false });
markdownIt.core.ruler.push('cell_paragraphs', cellParagraphs);
markdownIt.core.ruler.push('image_blocks', imageBlocks);

export const markdownParser = new MarkdownParser(schema, markdownIt, {
  blockquote: { block: 'blockquote' },
  paragraph: { block: 'paragraph' },
  list_item: { block: 'listItem' },
  bullet_list: { block: 'bulletList' },
  ordered_list: { block: 'orderedList', getAttrs: (token) => ({ start: Number(token.attrGet('start') ?? 1) }) },
  heading: { block: 'heading', getAttrs: (token) => ({ level: Number(token.tag.slice(1)) }) },
  code_block: { block: 'codeBlock', noCloseToken: true },
  fence: { block: 'codeBlock', getAttrs: (token) => ({ language: token.info.trim() || null }), noCloseToken: true },
  hr: { node: 'horizontalRule' },
  image: {
    node: 'image',
    getAttrs: (token) => ({
      src: token.attrGet('src'),
      title: token.attrGet('title') || null,
      alt: token.children?.[0]?.content || null,
    }),
  },
  hardbreak: { node: 'hardBreak' },
  table: { block: 'table' },
  thead: { ignore: true },
  tbody: { ignore: true },
  tr: { block: 'tableRow' },
  th: { block: 'tableHeader' },
  td: { block: 'tableCell' },
  em: { mark: 'italic' },
  strong: { mark: 'bold' },
  s: { mark: 'strike' },
  link: { mark: 'link', getAttrs: (token) => ({ href: token.attrGet('href') }) },
  code_inline: { mark: 'code', noCloseToken: true },
});
// A soft line break stays a line break in the text, so the content renders as its Markdown did.
const handlers = (
  markdownParser as unknown as { tokenHandlers: Record<string, (state: { addText(text: string): void }) => void> }
).tokenHandlers;
handlers.softbreak = (state) => state.addText('\n');

const base = defaultMarkdownSerializer.nodes;

/** A cell's content on one line (GFM rows are lines), its pipes escaped. */
const cellText = (cell: Node) =>
  serializerFor(cell.type.schema)
    .serialize(cell)
    .trim()
    .replace(/\s*\n+\s*/g, ' ')
    .replace(/\|/g, '\\|');

const nodes: Record<string, NodeSerializer> = {
  blockquote: base.blockquote,
  paragraph: base.paragraph,
  heading: base.heading,
  bulletList: (state, node) => state.renderList(node, '  ', () => '- '),
  orderedList: (state, node) => {
    // The default serializer reads the start number from `order`; Tiptap names it `start`.
    const start = Number(node.attrs.start ?? 1);
    const width = String(start + node.childCount - 1).length;
    state.renderList(node, state.repeat(' ', width + 2), (i) => {
      const number = String(start + i);
      return state.repeat(' ', width - number.length) + number + '. ';
    });
  },
  listItem: base.list_item,
  codeBlock: (state, node) => {
    const backticks = node.textContent.match(/`{3,}/gm);
    const fence = backticks ? backticks.sort().slice(-1)[0] + '`' : '```';
    state.write(fence + (node.attrs.language ?? '') + '\n');
    state.text(node.textContent, false);
    state.write('\n');
    state.write(fence);
    state.closeBlock(node);
  },
  hardBreak: base.hard_break,
  horizontalRule: (state, node) => {
    state.write('---');
    state.closeBlock(node);
  },
  image: (state, node) => {
    base.image(state, node, node, 0);
    state.closeBlock(node);
  },
  table: (state, node) => {
    node.forEach((row, _offset, rowIndex) => {
      const cells: string[] = [];
      row.forEach((cell) => cells.push(cellText(cell)));
      state.write(`| ${cells.join(' | ')} |`);
      state.ensureNewLine();
      // GFM needs a header row: the first row is it, whatever its cells are.
      if (rowIndex === 0) {
        state.write(`|${cells.map(() => ' --- ').join('|')}|`);
        state.ensureNewLine();
      }
    });
    state.closeBlock(node);
  },
  text: base.text,
};

const plain: MarkSerializer = { open: '', close: '', mixable: true };
const marks: Record<string, MarkSerializer> = {
  bold: defaultMarkdownSerializer.marks.strong,
  italic: defaultMarkdownSerializer.marks.em,
  strike: { open: '~~', close: '~~', mixable: true, expelEnclosingWhitespace: true },
  code: defaultMarkdownSerializer.marks.code,
  link: defaultMarkdownSerializer.marks.link,
  underline: plain,
};

/** An unknown node keeps its text: a textblock its inline content, a block its blocks, a leaf its label. */
const unknownNode: NodeSerializer = (state, node) => {
  if (node.isLeaf) state.text(node.type.spec.leafText?.(node) ?? '');
  else if (node.isInline || node.isTextblock) state.renderInline(node);
  else state.renderContent(node);
  if (node.isBlock) state.closeBlock(node);
};

const serializers = new WeakMap<Schema, MarkdownSerializer>();

/** The serializer for a reading schema (schema.ts readingSchema): the rules above, and unknownNode for the rest. */
function serializerFor(readingSchema: Schema): MarkdownSerializer {
  let serializer = serializers.get(readingSchema);
  if (serializer === undefined) {
    const allNodes = { ...nodes };
    for (const name of Object.keys(readingSchema.nodes)) allNodes[name] ??= unknownNode;
    const allMarks = { ...marks };
    for (const name of Object.keys(readingSchema.marks)) allMarks[name] ??= plain;
    serializer = new MarkdownSerializer(allNodes, allMarks);
    serializers.set(readingSchema, serializer);
  }
  return serializer;
}

/**
 * The document as CommonMark with GFM tables and strikethrough. Serialized one top-level block at a time and joined
 * with the blank line the serializer puts between blocks: its state reads the last character of its output string
 * after each write, which makes V8 flatten the growing string every time, quadratic in the document (a 1 MB
 * document took over 15 s whole, well under a second this way). Two lists of one kind in a row keep the extra line
 * that stops Markdown from merging them.
 */
export function toMarkdown(doc: Node): string {
  const serializer = serializerFor(doc.type.schema);
  const parts: string[] = [];
  doc.forEach((block, _offset, index) => {
    const previous = index > 0 ? doc.child(index - 1) : undefined;
    if (previous !== undefined)
      parts.push(
        previous.type === block.type && previous.type.spec.group?.split(' ').includes('list') ? '\n\n\n' : '\n\n',
      );
    parts.push(serializer.serialize(doc.copy(Fragment.from(block)), { tightLists: true }));
  });
  return parts.join('');
}
