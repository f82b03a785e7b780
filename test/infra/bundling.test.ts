/**
 * The deployed bundles (infra/bundling.ts), built for real: Ask AI's, whose three AI SDKs and Encryption SDK must
 * stay out of what a cold start loads, and a comment operation's, whose HTML sanitizer and Yjs must too. One build
 * each (~2 s) shared by the tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT, bundleFunction, loadedAtColdStart } from '../../infra/bundling';
import { routes, type Route } from '../../shared/routes';

const SDKS = ['openai', '@anthropic-ai/sdk', '@google/genai'];

const routeTable: readonly Route[] = routes;
const askAi = routeTable.find((route) => route.calls?.includes('ai-providers'));
if (askAi === undefined) throw new Error('No route calls the AI providers.');

const outdir = mkdtempSync(join(tmpdir(), 'bundle-test-'));
const metafile = bundleFunction(askAi.entry, outdir);
const code = Object.keys(metafile.outputs).filter((file) => file.endsWith('.mjs'));
const coldStart = loadedAtColdStart(metafile);

/** Add Comment Annotations: takes comment HTML and anchors, so it carries both lazy parts. */
const commentsOutdir = mkdtempSync(join(tmpdir(), 'bundle-test-'));
const comments = bundleFunction('functions/comments/annotations-add.ts', commentsOutdir);

afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
  rmSync(commentsOutdir, { recursive: true, force: true });
});

/** The npm packages whose code went into the given output files (of Ask AI's bundle, or of `built`). */
function packagesIn(files: readonly string[], built = metafile): Set<string> {
  return new Set(
    files
      .flatMap((file) => Object.keys(built.outputs[file].inputs))
      .flatMap((input) => [...input.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)].map((match) => match[1])),
  );
}

describe("Ask AI's bundle", () => {
  it('loads no AI provider SDK at cold start', () => {
    const loaded = packagesIn(coldStart);

    expect(SDKS.filter((sdk) => loaded.has(sdk))).toEqual([]);
  });

  it('carries each AI provider SDK in chunks that load on first use', () => {
    const lazy = packagesIn(code.filter((file) => !coldStart.includes(file)));

    expect(SDKS.filter((sdk) => !lazy.has(sdk))).toEqual([]);
  });

  it('loads the Encryption SDK with the first key it decrypts, not at cold start', () => {
    expect(packagesIn(coldStart).has('@aws-crypto/decrypt-node')).toBe(false);
    expect(packagesIn(code).has('@aws-crypto/decrypt-node')).toBe(true);
  });

  it('has only files that load as ES modules in Node, each chunk with its own require', () => {
    const urls = code.map((file) => pathToFileURL(join(PROJECT_ROOT, file)).href);
    const script = `for (const url of ${JSON.stringify(urls)}) await import(url);`;

    expect(() =>
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          ...process.env,
          AWS_REGION: 'us-east-1',
          TABLE_NAME: 'test',
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        stdio: 'pipe',
      }),
    ).not.toThrow();
  });
});

describe("a comment operation's bundle", () => {
  const LAZY = ['sanitize-html', 'htmlparser2', 'postcss', 'yjs', 'lib0'];

  it('loads neither the HTML sanitizer nor Yjs at cold start, and carries both for the first HTML or anchor', () => {
    const coldStartFiles = loadedAtColdStart(comments);
    const all = Object.keys(comments.outputs).filter((file) => file.endsWith('.mjs'));
    const loaded = packagesIn(coldStartFiles, comments);
    const lazy = packagesIn(
      all.filter((file) => !coldStartFiles.includes(file)),
      comments,
    );

    expect(LAZY.filter((name) => loaded.has(name))).toEqual([]);
    expect(LAZY.filter((name) => !lazy.has(name))).toEqual([]);
  });
});
