/**
 * The deployed bundles (infra/bundling.ts), built for real: Ask AI's, whose three AI SDKs and Encryption SDK must
 * stay out of what a cold start loads. One build (~2 s) shared by the tests.
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

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** The npm packages whose code went into the given output files. */
function packagesIn(files: readonly string[]): Set<string> {
  return new Set(
    files
      .flatMap((file) => Object.keys(metafile.outputs[file].inputs))
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
