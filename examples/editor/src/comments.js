/**
 * The comments panel (decisions §16): select text, comment, see each thread highlighted where it is anchored, resolve
 * it. The threads live in the service (`/v2/commentannotations/*`, called by server.js); the page anchors a new
 * thread with relative positions it makes itself (base64 of `Y.encodeRelativePosition`), and highlights each thread
 * from those same positions. A relative position names Yjs items, not offsets: text typed before the words in
 * another window moves the highlight with them, without asking the service again.
 */
import { Extension } from '@tiptap/core';
import { Plugin, PluginKey } from '@tiptap/pm/state';
import { Decoration, DecorationSet } from '@tiptap/pm/view';
import {
  absolutePositionToRelativePosition,
  relativePositionToAbsolutePosition,
  ySyncPluginKey,
} from '@tiptap/y-tiptap';
import * as Y from 'yjs';

const toBase64 = (bytes) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text) => Uint8Array.from(atob(text), (char) => char.charCodeAt(0));

/** The Yjs side of the editor: its document, its XmlFragment, and the Yjs ↔ ProseMirror mapping of the binding. */
const yjsOf = (state) => {
  const sync = ySyncPluginKey.getState(state);
  return sync?.binding ? { doc: sync.doc, type: sync.type, mapping: sync.binding.mapping } : undefined;
};

/** The selection as base64 relative positions `{from, to}`: an anchor of §16 once server.js adds the editorId. */
export function anchorOfSelection(editor) {
  const { from, to } = editor.state.selection;
  const yjs = yjsOf(editor.state);
  if (from === to || yjs === undefined) return undefined;
  const relative = (position, assoc) => {
    const made = absolutePositionToRelativePosition(position, yjs.type, yjs.mapping);
    // y-prosemirror ties a position to the character before it (assoc -1): right for the end of the words. Their
    // start is tied to their first character (assoc 0), as the service makes its own anchors, so text typed just
    // before the words stays outside the thread, here and in the service's answer.
    const at = assoc === 0 ? Y.createAbsolutePositionFromRelativePosition(made, yjs.doc) : null;
    return toBase64(Y.encodeRelativePosition(at ? Y.createRelativePositionFromTypeIndex(at.type, at.index, 0) : made));
  };
  return { from: relative(from, 0), to: relative(to, -1) };
}

/** Where an anchor is now in this editor, as ProseMirror positions; undefined when its text is gone. */
function rangeOf(state, anchor) {
  const yjs = yjsOf(state);
  if (yjs === undefined || anchor?.from === undefined) return undefined;
  const absolute = (base64) =>
    relativePositionToAbsolutePosition(yjs.doc, yjs.type, Y.decodeRelativePosition(fromBase64(base64)), yjs.mapping);
  const from = absolute(anchor.from);
  const to = absolute(anchor.to);
  return from === null || to === null || from >= to || to > state.doc.content.size ? undefined : { from, to };
}

const highlightKey = new PluginKey('commentHighlights');

/**
 * Highlights the open threads' anchored text. The decorations are made again from the relative positions when the
 * threads change and when a change from Yjs (another window, a restore) arrives; a local keystroke maps them as
 * ProseMirror maps any decoration (typing just before or after the words stays outside).
 */
export const CommentHighlights = Extension.create({
  name: 'commentHighlights',
  addProseMirrorPlugins() {
    const decorate = (state, threads) =>
      DecorationSet.create(
        state.doc,
        threads.flatMap((thread) => {
          const range = rangeOf(state, thread.anchor);
          return range === undefined
            ? []
            : [
                Decoration.inline(range.from, range.to, {
                  class: 'comment-highlight',
                  'data-annotation-id': thread.annotationId,
                }),
              ];
        }),
      );
    return [
      new Plugin({
        key: highlightKey,
        state: {
          init: () => ({ threads: [], decorations: DecorationSet.empty }),
          apply(tr, value, _old, state) {
            const threads = tr.getMeta(highlightKey) ?? value.threads;
            if (threads !== value.threads || tr.getMeta(ySyncPluginKey)?.isChangeOrigin)
              return { threads, decorations: decorate(state, threads) };
            return { threads, decorations: value.decorations.map(tr.mapping, tr.doc) };
          },
        },
        props: { decorations: (state) => highlightKey.getState(state).decorations },
      }),
    ];
  },
});

/**
 * The panel: a form that comments on the selected text, and the threads, newest first, each with its quoted text,
 * its comments and a "Resolve" button. `api` calls this application's server; `nudge` tells the other pages that the
 * list changed. Returns the list's refresh.
 */
export function commentPanel({ editor, userId, api, names, nudge, element }) {
  const form = document.querySelector('#add-comment');
  const list = document.querySelector('#threads');
  const showOpen = (threads) =>
    editor.view.dispatch(
      editor.state.tr.setMeta(
        highlightKey,
        threads.filter((thread) => !thread.resolved),
      ),
    );

  const refresh = async () => {
    const threads = await api('GET', '/comments', userId);
    showOpen(threads);
    list.replaceChildren(
      ...threads.map((thread) => {
        const item = element('li', undefined, { className: 'thread' });
        item.dataset.annotationId = thread.annotationId;
        item.dataset.resolved = String(thread.resolved);
        // What the service says the thread covers now (§16 `quotedText`), else what this page's editor shows there.
        const range = rangeOf(editor.state, thread.anchor);
        const quoted = thread.anchor?.quotedText ?? (range && editor.state.doc.textBetween(range.from, range.to, ' '));
        item.append(
          element('q', thread.anchor?.orphaned ? 'its text was deleted' : (quoted ?? '')),
          ...thread.comments.map((comment) =>
            element('p', `${names(comment.from.userId)}: ${comment.commentText ?? ''}`),
          ),
        );
        if (thread.resolved) item.append(element('small', thread.status.name));
        else {
          const resolve = element('button', 'Resolve', { type: 'button' });
          resolve.onclick = async () => {
            await api('POST', '/comments/resolve', userId, { annotationId: thread.annotationId });
            await refresh();
            nudge();
          };
          item.append(resolve);
        }
        return item;
      }),
    );
  };

  form.onsubmit = async (event) => {
    event.preventDefault();
    const anchor = anchorOfSelection(editor);
    const text = form.elements.text.value.trim();
    if (anchor === undefined || text === '') return;
    await api('POST', '/comments', userId, { text, anchor });
    form.reset();
    await refresh();
    nudge();
  };
  return refresh;
}
