/**
 * docs/api.md's figures about the OpenAPI document (its size, operations, examples, shared error responses) and
 * the client types generated from it, measured from openapi.json and test/support/openapi-types.ts as
 * `npm run openapi` writes them: they had drifted (414 KB for 53 operations, with 59 in the document). Counts must
 * match; sizes within 5 %, so a small change to a description does not fail the suite. On a mismatch the error
 * shows the sentence with today's figures. Reading the Markdown here is a test of the docs.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TYPES_FILE } from '../../openapi/client-types';

const ROOT = join(__dirname, '..', '..');
const SIZE_TOLERANCE = 0.05;

/** KB as the docs count them: 1,024 bytes, rounded. */
const kb = (bytes: number): number => Math.round(bytes / 1024);

interface Figures {
  documentKb: number;
  operations: number;
  examplesKb: number;
  sharedErrors: number;
  inlineCopies: number;
  typesKb: number;
}

/** Today's figures, from the files `npm run openapi` writes. */
function measured(): Figures {
  const text = readFileSync(join(ROOT, 'openapi.json'), 'utf8');
  const document = JSON.parse(text);
  const operations = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((path) =>
    Object.values(path),
  );
  // The examples: each operation's request and response examples (the media types' `example`/`examples`).
  const withoutExamples = JSON.parse(text);
  for (const path of Object.values(withoutExamples.paths as Record<string, Record<string, any>>)) {
    for (const operation of Object.values(path)) {
      const media = [
        ...Object.values(operation.requestBody?.content ?? {}),
        ...Object.values(operation.responses ?? {}).flatMap((response: any) => Object.values(response.content ?? {})),
      ];
      for (const type of media as Record<string, unknown>[]) {
        delete type.example;
        delete type.examples;
      }
    }
  }
  const pretty = (value: unknown) => Buffer.byteLength(`${JSON.stringify(value, null, 2)}\n`);
  return {
    documentKb: kb(statSync(join(ROOT, 'openapi.json')).size),
    operations: operations.length,
    examplesKb: kb(pretty(document) - pretty(withoutExamples)),
    sharedErrors: Object.keys(document.components?.responses ?? {}).length,
    inlineCopies: operations
      .flatMap((operation) => Object.values(operation.responses ?? {}))
      .filter((response: any) => typeof response.$ref === 'string').length,
    typesKb: kb(statSync(TYPES_FILE).size),
  };
}

const SENTENCE =
  /The document is (\d+) KB for (\d+) operations, (\d+) KB of\s+it the examples \(the error responses are (\d+) shared components instead of (\d+) inline copies\); the generated\s+client types are (\d+) KB\b/;

const sentence = (f: Figures): string =>
  `The document is ${f.documentKb} KB for ${f.operations} operations, ${f.examplesKb} KB of it the examples (the error responses are ${f.sharedErrors} shared components instead of ${f.inlineCopies} inline copies); the generated client types are ${f.typesKb} KB`;

describe("docs/api.md's OpenAPI figures", () => {
  it('match the document and the client types as generated', () => {
    const match = SENTENCE.exec(readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8'));
    if (match === null)
      throw new Error(
        'docs/api.md no longer has the sentence of OpenAPI figures this test reads ("The document is … KB for … operations, …").',
      );
    const [documentKb, operations, examplesKb, sharedErrors, inlineCopies, typesKb] = match
      .slice(1)
      .map(Number) as number[];
    const documented: Figures = { documentKb, operations, examplesKb, sharedErrors, inlineCopies, typesKb } as Figures;
    const today = measured();
    const near = (a: number, b: number) => Math.abs(a - b) <= Math.max(1, b * SIZE_TOLERANCE);
    const holds =
      documented.operations === today.operations &&
      documented.sharedErrors === today.sharedErrors &&
      documented.inlineCopies === today.inlineCopies &&
      near(documented.documentKb, today.documentKb) &&
      near(documented.examplesKb, today.examplesKb) &&
      near(documented.typesKb, today.typesKb);

    // On a mismatch: the sentence docs/api.md should have.
    expect(holds ? sentence(today) : sentence(documented)).toBe(sentence(today));
  });
});
