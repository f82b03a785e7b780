/**
 * Bundle size and cold import time of every deployed function, beside a baseline bundle that imports only the
 * DynamoDB document client. Bundled exactly as deployed (`bundleFunction`, infra/bundling.ts). Import time: median
 * of several fresh Node processes, each timing `await import()` of the entry, which loads the chunks it imports
 * statically and none of those behind a dynamic import; the baseline is imported in turn with each function, and the
 * ratio is against those imports.
 * Goals (issue 16): Ask AI ≤ 1.5× the baseline's import time, every function that does not use KMS ≤ 1.3×, those
 * that do (the Encryption SDK) ≤ 2×. Which goal a function has comes from its access declaration.
 * `BUNDLES=<text>` measures only the functions whose entry contains the text (`BUNDLES=functions/comments/`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Metafile } from 'esbuild';
import { ENTRY_FILE, bundleFunction, loadedAtColdStart } from '../infra/bundling';
import { deployTasks } from '../shared/deploy-tasks';
import type { AccessDeclaration } from '../shared/grants';
import { entryId, routes } from '../shared/routes';
import { queueWorkers, workers } from '../shared/workers';

const RUNS = 9;
const BASELINE_ENTRY = 'bench/baseline-handler.ts';
const NOT_ROUTED_ENTRY = 'functions/gateway/not-routed.ts';

type Group = 'Ask AI' | 'no KMS' | 'KMS (Encryption SDK)';

const GOALS: Record<Group, number> = { 'Ask AI': 1.5, 'no KMS': 1.3, 'KMS (Encryption SDK)': 2 };

interface Entry {
  entry: string;
  group: Group;
}

interface Bundle extends Entry {
  name: string;
  /** The entry file and the chunks it imports statically: what a cold start loads. */
  eagerKb: number;
  /** Every chunk of the asset, including those behind dynamic imports. */
  totalKb: number;
  /** The entry file, to import. */
  file: string;
}

interface Row extends Bundle {
  importMs: number;
  /** The baseline's import time, measured in turn with this function's. */
  baselineMs: number;
}

/** The group of a function from what its entries declare: the AI providers it calls, the KMS use. */
function groupOf(declarations: ReadonlyArray<AccessDeclaration & { calls?: readonly string[] }>): Group {
  if (declarations.some((declaration) => declaration.calls?.includes('ai-providers'))) return 'Ask AI';
  return declarations.some((declaration) => (declaration.kms ?? []).length > 0) ? 'KMS (Encryption SDK)' : 'no KMS';
}

/** Every deployed function's entry, once (several routes may share a handler file), with its group. */
function deployedEntries(): Entry[] {
  const declarations = [...routes, ...workers, ...queueWorkers, ...deployTasks];
  const entries = [...new Set(declarations.map((declaration) => declaration.entry)), NOT_ROUTED_ENTRY];
  return entries.map((entry) => ({
    entry,
    group: groupOf(declarations.filter((declaration) => declaration.entry === entry)),
  }));
}

const kb = (metafile: Metafile, files: string[]): number =>
  files.reduce((sum, file) => sum + metafile.outputs[file].bytes, 0) / 1024;

const env = {
  ...process.env,
  TABLE_NAME: 'bench',
  AWS_REGION: 'us-east-1',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

function importOnce(file: string): number {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' }));
}

const median = (samples: number[]): number => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];

/**
 * Median import times of `file` and of the baseline, imported in turn: the machine's load (other processes on a
 * shared VM) then weighs on both alike, and the ratio holds where the milliseconds drift.
 */
function importMs(file: string, baseline: string): { importMs: number; baselineMs: number } {
  const samples = Array.from({ length: RUNS }, () => ({ baseline: importOnce(baseline), ms: importOnce(file) }));
  return {
    importMs: median(samples.map((sample) => sample.ms)),
    baselineMs: median(samples.map((sample) => sample.baseline)),
  };
}

function bundle({ entry, group }: Entry, out: string): Bundle {
  const name = entryId(entry);
  const outdir = join(out, name);
  const metafile = bundleFunction(entry, outdir);
  return {
    name,
    entry,
    group,
    eagerKb: kb(metafile, loadedAtColdStart(metafile)),
    totalKb: kb(
      metafile,
      Object.keys(metafile.outputs).filter((file) => !file.endsWith('.map')),
    ),
    file: join(outdir, ENTRY_FILE),
  };
}

export async function run(): Promise<void> {
  const out = mkdtempSync(join(tmpdir(), 'bench-bundles-'));
  try {
    const baseline = bundle({ entry: BASELINE_ENTRY, group: 'no KMS' }, out);
    // The first imports of a run pay for cold disk caches.
    importMs(baseline.file, baseline.file);
    const only = process.env.BUNDLES;
    const entries = deployedEntries().filter(({ entry }) => only === undefined || entry.includes(only));
    const rows: Row[] = entries.map((entry) => {
      const built = bundle(entry, out);
      return { ...built, ...importMs(built.file, baseline.file) };
    });
    const baselineMs = median(rows.map((row) => row.baselineMs));
    const ratio = (row: Row): number => row.importMs / row.baselineMs;

    console.log(
      `\nBundles as deployed (${RUNS} fresh imports of each entry, each beside one of the baseline; medians)\n`,
    );
    console.log('| function | goal | loaded at cold start KB | all chunks KB | import ms | × baseline |');
    console.log('|---|---|---:|---:|---:|---:|');
    console.log(
      `| Baseline (DynamoDB document client) | | ${baseline.eagerKb.toFixed(1)} | ${baseline.totalKb.toFixed(1)} | ${baselineMs.toFixed(1)} | 1.00 |`,
    );
    for (const row of rows) {
      console.log(
        `| ${row.name} | ${row.group} ≤ ${GOALS[row.group]}× | ${row.eagerKb.toFixed(1)} | ${row.totalKb.toFixed(1)} | ${row.importMs.toFixed(1)} | ${ratio(row).toFixed(2)} |`,
      );
    }

    console.log('\n| group | functions | × baseline (median, worst) | goal | met |');
    console.log('|---|---:|---|---:|:-:|');
    for (const [group, goal] of Object.entries(GOALS) as Array<[Group, number]>) {
      const ratios = rows
        .filter((row) => row.group === group)
        .map(ratio)
        .sort((a, b) => a - b);
      if (ratios.length === 0) continue;
      const worst = ratios[ratios.length - 1];
      console.log(
        `| ${group} | ${ratios.length} | ${ratios[Math.floor(ratios.length / 2)].toFixed(2)}, ${worst.toFixed(2)} | ≤ ${goal}× | ${worst <= goal ? 'met' : 'NOT MET'} |`,
      );
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
