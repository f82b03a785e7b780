/**
 * Comment HTML as stored (decisions §16): no script, style, event handler or `javascript:` URL. sanitize-html is an
 * allowlist over htmlparser2: only the tags and attributes named survive, `script`/`style` are dropped with their
 * content, and link schemes are limited to http(s), mailto and tel.
 */
import sanitizeHtml from 'sanitize-html';

const OPTIONS: sanitizeHtml.IOptions = {
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

export function sanitizeCommentHtml(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
