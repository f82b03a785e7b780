/**
 * Bundle size and cold import time of every function, beside a baseline bundle that imports only the DynamoDB
 * document client. Bundled exactly as deployed (infra/bundling.ts). Import time: median of several fresh Node
 * processes, each timing `await import(bundle)`.
 * Targets (issue 2): every bundle ≤ 300 KB; import time ≤ 1.5× the baseline.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { esbuildOptions } from '../../infra/bundling';
import { entryId, routes } from '../../shared/routes';
import { workers } from '../../shared/workers';

const ROOT = join(__dirname, '..', '..');
const OUT = join(ROOT, '.cache', 'bench', 'bundles');
const RUNS = 9;
const SIZE_TARGET_KB = 300;
const IMPORT_RATIO_TARGET = 1.5;

interface Row {
  name: string;
  sizeKb: number;
  importMs: number;
}

async function bundle(entry: string, name: string): Promise<string> {
  const outfile = join(OUT, `${name}.mjs`);
  await build({ ...esbuildOptions, entryPoints: [join(ROOT, entry)], outfile, logLevel: 'error' });
  return outfile;
}

const env = {
  ...process.env,
  TABLE_NAME: 'bench',
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

function importMs(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const samples = Array.from({ length: RUNS }, () =>
    Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' })),
  ).sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

async function measure(entry: string, name: string): Promise<Row> {
  const file = await bundle(entry, name);
  return { name, sizeKb: statSync(file).size / 1024, importMs: importMs(file) };
}

export async function run(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  // The first imports of a run pay for cold disk caches; warm up, then take the baseline before and after the
  // functions and use the mean of the two medians so drift during the run does not skew every ratio.
  importMs(await bundle('test/bench/baseline-handler.ts', 'Baseline'));
  const before = await measure('test/bench/baseline-handler.ts', 'Baseline');
  const entries = [...new Set(routes.map((route) => route.entry)), ...workers.map((worker) => worker.entry), 'functions/gateway/not-routed.ts'];
  const rows: Row[] = [];
  for (const entry of entries) rows.push(await measure(entry, entryId(entry)));
  const after = await measure('test/bench/baseline-handler.ts', 'Baseline');
  const baseline: Row = { ...before, importMs: (before.importMs + after.importMs) / 2 };

  console.log(`\nBundles (${RUNS} fresh imports each, median; targets: ≤ ${SIZE_TARGET_KB} KB, ≤ ${IMPORT_RATIO_TARGET}× baseline import)\n`);
  console.log('| function | bundle KB | import ms | × baseline | size ok | import ok |');
  console.log('|---|---:|---:|---:|:-:|:-:|');
  for (const row of [baseline, ...rows]) {
    const ratio = row.importMs / baseline.importMs;
    console.log(
      `| ${row.name} | ${row.sizeKb.toFixed(1)} | ${row.importMs.toFixed(1)} | ${ratio.toFixed(2)} | ${row.sizeKb <= SIZE_TARGET_KB ? 'yes' : 'NO'} | ${ratio <= IMPORT_RATIO_TARGET ? 'yes' : 'NO'} |`,
    );
  }
}
