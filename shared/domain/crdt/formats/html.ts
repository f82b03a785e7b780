/**
 * HTML of xml editors' content (docs/decisions.md §15) through prosemirror-model's own DOMParser and DOMSerializer,
 * which take a DOM: linkedom is that DOM on the server (a small, dependency-light implementation; it parses with
 * htmlparser2 and runs no scripts and loads no resources). Parsing follows the schema's parse rules, as a Tiptap
 * editor pasting the HTML would: elements the schema has no rule for give their content, attributes without a rule
 * are left out.
 */
import { parseHTML } from 'linkedom';
import { DOMParser, DOMSerializer, type Node } from 'prosemirror-model';
import { schema } from './schema';

/** A new empty HTML document (each call its own: nothing of one request stays in another's tree). */
const emptyDocument = () => parseHTML('<!DOCTYPE html><html><head></head><body></body></html>').document;

const parser = DOMParser.fromSchema(schema);

/** The document that `html` (a fragment, as a body's content) describes in the schema. */
export function fromHtml(html: string): Node {
  const document = emptyDocument();
  document.body.innerHTML = html;
  return parser.parse(document.body);
}

/** The document as an HTML fragment; unknown nodes and marks as elements of their own name (schema.ts). */
export function toHtml(doc: Node): string {
  const document = emptyDocument();
  const fragment = DOMSerializer.fromSchema(doc.type.schema).serializeFragment(doc.content, { document });
  document.body.appendChild(fragment);
  return document.body.innerHTML;
}
