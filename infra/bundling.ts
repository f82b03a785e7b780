/**
 * How every function is bundled, in one place: `functionCode` gives the CDK stack a function's code asset, and the
 * bench (bench/bundles.ts) and the bundle test call the same `bundleFunction`, so what is measured is what is
 * deployed.
 *
 * esbuild with code splitting, run in-process by CDK's local bundling. NodejsFunction cannot split (it passes
 * esbuild `--outfile`, and splitting needs `--outdir`); with one output file every dynamic `import()` is inlined,
 * so Ask AI parsed all three AI SDKs on every cold start. Split, a function's asset is its entry `index.mjs`, the
 * shared chunks it imports statically (loaded at cold start) and the chunks behind its dynamic imports (loaded by
 * the first call that needs them), under `chunks/`.
 */
import { join } from 'node:path';
import { AssetHashType, BundlingOutput, DockerImage, type BundlingOptions, type ILocalBundling } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';

/** Route entries name their handler files relative to the project root (the folder holding package.json). */
export const PROJECT_ROOT = join(__dirname, '..');

/** The entry file each asset starts from, and its export: the function's handler setting. */
const ENTRY_NAME = 'index';
export const ENTRY_FILE = `${ENTRY_NAME}.mjs`;
export const HANDLER = `${ENTRY_NAME}.handler`;

/** Matches the Lambda runtime (nodejs22.x): esbuild leaves alone the syntax Node 22 runs natively. */
const TARGET = 'node22';

/**
 * Prefer the ESM build of a dependency: it tree-shakes, where a CommonJS build is kept whole. Most of the bundle
 * is the AWS SDK, whose packages ship both.
 */
const MAIN_FIELDS = ['module', 'main'];

/**
 * An ESM bundle has no `require`, yet CommonJS dependencies inlined into it still call `require('crypto')` and
 * the like for Node built-ins. Defining it from `import.meta.url` lets those calls work. esbuild writes the banner
 * at the top of every chunk; each chunk is a module of its own, so each gets its own `require`.
 */
const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * In Lambda the SDK's default credential chain always stops at the environment (the execution role's keys);
 * the rest of the chain (SSO, profiles, web identity, IMDS, and the STS/SSO clients they bring) is ~95 KB of every
 * bundle that never runs there. The bundles resolve the chain's package to a provider that reads the environment
 * only. The file is referenced by path, not imported: infra/ loads no runtime code.
 */
const ALIASES: Record<string, string> = {
  '@aws-sdk/credential-provider-node': join(PROJECT_ROOT, 'shared', 'adapters', 'lambda-credentials.ts'),
};

/**
 * The esbuild options of one function's bundle: ESM (`.mjs`, which Lambda's Node runtime loads as a module
 * without a package.json), split into an entry and chunks, minified, with source maps. The AWS SDK is bundled
 * (`external: []`) rather than taken from the runtime: the deployed code then runs the exact SDK versions the
 * lock file pins and the tests exercised, and a bundled, tree-shaken SDK loads faster at cold start than the
 * runtime's full copy.
 */
export function bundleOptions(entry: string, outdir: string): BuildOptions {
  return {
    absWorkingDir: PROJECT_ROOT,
    entryPoints: { [ENTRY_NAME]: join(PROJECT_ROOT, entry) },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: TARGET,
    mainFields: MAIN_FIELDS,
    outExtension: { '.js': '.mjs' },
    // Content-hashed chunk names: the same sources give the same files, so the asset hash is stable.
    chunkNames: 'chunks/[name]-[hash]',
    minify: true,
    sourcemap: true,
    // Stack traces only need the mappings; embedding the sources would roughly double the bundle for no gain.
    sourcesContent: false,
    banner: { js: ESM_REQUIRE_BANNER },
    external: [],
    alias: ALIASES,
    metafile: true,
    logLevel: 'error',
  };
}

/** Bundles the handler file `entry` (relative to the project root) into `outdir`; returns what esbuild wrote. */
export function bundleFunction(entry: string, outdir: string): Metafile {
  const { metafile } = buildSync(bundleOptions(entry, outdir));
  if (metafile === undefined) throw new Error(`esbuild returned no metafile for ${entry}.`);
  return metafile;
}

/**
 * The files of a bundle that a cold start loads: the entry and the chunks it imports statically, transitively
 * (paths as in `metafile`, relative to the project root). Chunks reached only through a dynamic `import()` are
 * left out; they load when a call first needs them.
 */
export function loadedAtColdStart(metafile: Metafile): string[] {
  const entry = Object.keys(metafile.outputs).find((file) => file.endsWith(`/${ENTRY_FILE}`));
  if (entry === undefined) throw new Error(`The bundle has no ${ENTRY_FILE}.`);
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of metafile.outputs[file].imports) {
      if (imported.kind === 'import-statement' && imported.path in metafile.outputs) pending.push(imported.path);
    }
  }
  return [...seen];
}

/**
 * CDK's local bundling: esbuild runs in the synthesizing process, never in Docker (CI and laptops have none).
 * A class rather than an object literal: CDK caches assets by a JSON key of the bundling options, which keeps
 * the `entry` field and drops functions, so each entry gets an asset of its own.
 */
class EsbuildBundling implements ILocalBundling {
  constructor(readonly entry: string) {}

  tryBundle(outputDir: string): boolean {
    bundleFunction(this.entry, outputDir);
    return true;
  }
}

/**
 * The code asset of the function whose handler file is `entry`, named by the hash of the bundle (not of the
 * sources, which would mean fingerprinting the whole project, node_modules included).
 */
export function functionCode(entry: string): lambda.Code {
  const bundling: BundlingOptions = {
    // Required by the type, never pulled: local bundling always succeeds or throws.
    image: DockerImage.fromRegistry('local-bundling-only'),
    local: new EsbuildBundling(entry),
    outputType: BundlingOutput.NOT_ARCHIVED,
  };
  return lambda.Code.fromAsset(PROJECT_ROOT, { assetHashType: AssetHashType.OUTPUT, bundling });
}

/**
 * Function environment that the bundle format needs: Node maps minified stack traces back to the TypeScript
 * sources only when source maps are enabled at start-up.
 */
export const bundleRuntimeEnvironment: Readonly<Record<string, string>> = {
  NODE_OPTIONS: '--enable-source-maps',
};
