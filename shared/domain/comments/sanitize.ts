/**
 * Comment HTML as stored (decisions §16): no script, style, event handler or `javascript:` URL. sanitize-html is an
 * allowlist over htmlparser2: only the tags and attributes named survive, `script`/`style` are dropped with their
 * content, and link schemes are limited to http(s), mailto and tel.
 *
 * sanitize-html (with htmlparser2, postcss and entities: ~240 KB of the bundle) is imported on the first HTML a
 * request brings: the operations that never take HTML leave it out of their bundles, and those that do load it only
 * when a comment has HTML.
 */
import type { IOptions } from 'sanitize-html';

async function loadSanitizer(): Promise<(html: string) => string> {
  const { default: sanitizeHtml } = await import('sanitize-html');
  const options: IOptions = {
    allowedTags: [...sanitizeHtml.defaults.allowedTags, 'span', 'img', 'del', 's', 'u'],
    allowedAttributes: {
      a: ['href', 'name', 'target', 'rel'],
      img: ['src', 'alt', 'title', 'width', 'height'],
      span: ['class', 'data-*'],
      code: ['class'],
    },
    allowedSchemes: ['http', 'https', 'mailto', 'tel'],
    allowedSchemesByTag: { img: ['http', 'https'] },
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
  };
  return (html) => sanitizeHtml(html, options);
}

let sanitizer: Promise<(html: string) => string> | undefined;

export async function sanitizeCommentHtml(html: string): Promise<string> {
  sanitizer ??= loadSanitizer().catch((error: unknown) => {
    sanitizer = undefined;
    throw error;
  });
  return (await sanitizer)(html);
}

/** `comments` with their HTML sanitized (the same objects when none has HTML). */
export async function withSanitizedHtml<T extends { commentHtml?: string }>(comments: readonly T[]): Promise<T[]> {
  return Promise.all(
    comments.map(async (comment) =>
      comment.commentHtml === undefined
        ? comment
        : { ...comment, commentHtml: await sanitizeCommentHtml(comment.commentHtml) },
    ),
  );
}
