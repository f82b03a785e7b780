/**
 * Comment anchors (issue 33 items 2 and 5): resolving the anchors of 100 threads in one xml editor whose Yjs state is
 * ~1 MB (the crdt suite's document: 250 KB of Markdown with headings, marks, links, lists, quotes, code blocks and
 * tables), as a read of the threads does after loading the editor's state: the state decoded once, the content
 * walked once for every anchor. In this process (no stack): the storage reads are the operations' to measure.
 */
import {
  anchorDoc,
  anchorText,
  prepareAnchors,
  resolveAnchors,
  type StoredAnchor,
} from '../shared/domain/comments/anchors';
import { parseContent, xmlStateOf } from '../shared/domain/crdt/formats/index';
import { sampleMarkdown } from './crdt';
import { medianMs } from './harness';

const RUNS = 7;
const THREADS = 100;
const EDITOR = { editorId: 'body', type: 'xml' as const, contentKey: 'default' };

export async function run(): Promise<void> {
  const state = xmlStateOf(EDITOR.contentKey, parseContent('markdown', sampleMarkdown(250_000)));
  const doc = anchorDoc(state);
  const text = anchorText(EDITOR, doc);
  // 100 threads spread over the document, each over 40 characters (some across a block boundary).
  const inputs = Array.from({ length: THREADS }, (_, index) => ({
    editorId: EDITOR.editorId,
    index: Math.floor((text.length / THREADS) * index),
    length: 40,
  }));
  const anchors = prepareAnchors(EDITOR, doc, inputs) as StoredAnchor[];
  if (anchors.some((anchor) => !('from' in anchor))) throw new Error('an anchor could not be made');

  const decode = await medianMs(RUNS, () => anchorDoc(state));
  const walkOne = await medianMs(RUNS, () => resolveAnchors(EDITOR, doc, anchors.slice(0, 1)));
  const walkAll = await medianMs(RUNS, () => resolveAnchors(EDITOR, doc, anchors));
  const resolveOne = await medianMs(RUNS, () => resolveAnchors(EDITOR, state, anchors.slice(0, 1)));
  const resolveAll = await medianMs(RUNS, () => resolveAnchors(EDITOR, state, anchors));
  const prepare = await medianMs(RUNS, () => prepareAnchors(EDITOR, state, inputs));

  const kb = (state.length / 1024).toFixed(0);
  console.log(
    `\nComment anchors: ${THREADS} threads in one xml editor (Yjs state ${kb} KB, ${text.length.toLocaleString('en')} characters of text), medians of ${RUNS} in process\n`,
  );
  console.log('| step | ms |');
  console.log('|---|---:|');
  console.log(`| decode the state (one Y.Doc) | ${decode.toFixed(0)} |`);
  console.log(`| walk the content for 1 anchor (decoded) | ${walkOne.toFixed(0)} |`);
  console.log(`| walk the content for ${THREADS} anchors (decoded) | ${walkAll.toFixed(0)} |`);
  console.log(`| resolve 1 anchor from the state | ${resolveOne.toFixed(0)} |`);
  console.log(`| **resolve ${THREADS} anchors from the state** (goal ≤ 300) | ${resolveAll.toFixed(0)} |`);
  console.log(`| make ${THREADS} anchors from index and length, from the state | ${prepare.toFixed(0)} |`);
}
