/**
 * How every function is bundled, in one place. The CDK stack passes `lambdaBundling` to each NodejsFunction and
 * the bench script passes `esbuildOptions` to esbuild directly, so what is measured is what is deployed.
 */
import { join } from 'node:path';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/** Matches the Lambda runtime (nodejs22.x): esbuild leaves alone the syntax Node 22 runs natively. */
const TARGET = 'node22';

/**
 * Prefer the ESM build of a dependency: it tree-shakes, where a CommonJS build is kept whole. Most of the bundle
 * is the AWS SDK, whose packages ship both.
 */
const MAIN_FIELDS = ['module', 'main'];

/**
 * An ESM bundle has no `require`, yet CommonJS dependencies inlined into it still call `require('crypto')` and
 * the like for Node built-ins. Defining it from `import.meta.url` lets those calls work.
 */
const ESM_REQUIRE_BANNER = "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * In Lambda the SDK's default credential chain always stops at the environment (the execution role's keys);
 * the rest of the chain (SSO, profiles, web identity, IMDS, and the STS/SSO clients they bring) is ~95 KB of every
 * bundle that never runs there. The bundles resolve the chain's package to a provider that reads the environment
 * only. The file is referenced by path, not imported: infra/ loads no runtime code.
 */
const CREDENTIALS_ALIAS = {
  '@aws-sdk/credential-provider-node': join(__dirname, '..', 'shared', 'aws', 'lambda-credentials.ts'),
};

const MINIFY = true;
const SOURCE_MAP = true;
/** Stack traces only need the mappings; embedding the sources would roughly double the bundle for no gain. */
const SOURCES_CONTENT = false;

/**
 * Bundling options for `NodejsFunction`. The AWS SDK is bundled (`externalModules: []`) rather than taken from
 * the runtime: the deployed code then runs the exact SDK versions the lock file pins and the tests exercised, and
 * a bundled, tree-shaken SDK loads faster at cold start than the runtime's full copy.
 */
export const lambdaBundling: BundlingOptions = {
  format: OutputFormat.ESM,
  mainFields: MAIN_FIELDS,
  minify: MINIFY,
  sourceMap: SOURCE_MAP,
  sourcesContent: SOURCES_CONTENT,
  target: TARGET,
  banner: ESM_REQUIRE_BANNER,
  externalModules: [],
  bundleAwsSDK: true,
  esbuildArgs: Object.fromEntries(Object.entries(CREDENTIALS_ALIAS).map(([from, to]) => [`--alias:${from}`, to])),
  // Bundle with the esbuild from devDependencies; never fall back to a Docker image (CI and laptops have none).
  forceDockerBundling: false,
};

/**
 * Function environment that the bundle format needs: Node maps minified stack traces back to the TypeScript
 * sources only when source maps are enabled at start-up.
 */
export const bundleRuntimeEnvironment: Readonly<Record<string, string>> = {
  NODE_OPTIONS: '--enable-source-maps',
};

/** The same bundling as plain esbuild options (add `entryPoints` and `outfile`/`outdir`). */
export const esbuildOptions = {
  format: 'esm',
  mainFields: MAIN_FIELDS,
  minify: MINIFY,
  sourcemap: SOURCE_MAP,
  sourcesContent: SOURCES_CONTENT,
  target: TARGET,
  banner: { js: ESM_REQUIRE_BANNER },
  platform: 'node',
  bundle: true,
  external: [],
  alias: CREDENTIALS_ALIAS,
} satisfies BuildOptions;
