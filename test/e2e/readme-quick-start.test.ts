/**
 * The README's quick start, run as a reader runs it: its shell block pasted into bash (with `set -euo pipefail`,
 * so any failing step stops it) against a fresh local stack, then the runnable examples of docs/api.md, which go on
 * from where the quick start leaves the shell. Reading the Markdown here is a test of the docs; no service code
 * reads Markdown.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkResponse } from '../support/contract';
import { baseUrl } from '../support/http';

const ROOT = join(__dirname, '..', '..');

/** The `sh` blocks of a Markdown file between two markers, in order. */
function shellBlocks(file: string, begin: string, end: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file} has no ${begin} ... ${end} section.`);
  const blocks = [...text.slice(from, to).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
  if (blocks.length === 0) throw new Error(`${file} has no sh block between ${begin} and ${end}.`);
  return blocks;
}

const quickStart = () => shellBlocks('README.md', '<!-- quick-start:begin -->', '<!-- quick-start:end -->');
const apiExamples = () => shellBlocks('docs/api.md', '<!-- examples:begin -->', '<!-- examples:end -->');

/** The paths the script calls, in order: each call (`post`, `as_workspace`, `as_key`) prints one answer. */
function calledPaths(script: string): string[] {
  return [...script.matchAll(/^\s*(?:[A-Z_]+=\$\()?(?:post|as_workspace|as_key) (\/v[12]\/\S+)/gm)].map((match) => match[1] as string);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the script with bash as a reader's shell would, BASE pointed at the e2e tier's local stack. */
function runInBash(script: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { env: { ...process.env, BASE: baseUrl() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Each printed answer, parsed, with the path that answered it; every answer must be a success of that operation. */
function expectEverySuccess(run: Run, paths: string[]): void {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  const answers = run.stdout.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, any>);
  expect(answers).toHaveLength(paths.length);
  answers.forEach((answer, i) => {
    const path = paths[i] as string;
    expect({ path, error: answer.error }).toEqual({ path, error: undefined });
    // Ask AI and Suggest Decision answer their own `result`; every other operation the success envelope.
    if (!['/v2/rewriter/ask-ai', '/v2/memory/suggest'].includes(path)) expect({ path, status: answer.result?.status }).toEqual({ path, status: 'success' });
    checkResponse(path, 200, answer);
  });
}

describe("the README's quick start", () => {
  it('runs as pasted against a fresh local stack, every step answered with a success', async () => {
    const script = quickStart().join('\n');

    const run = await runInBash(script);

    expectEverySuccess(run, calledPaths(script));
  });

  it('leaves the shell ready for the examples of docs/api.md, which all succeed after it', async () => {
    const script = [...quickStart(), ...apiExamples()].join('\n');

    const run = await runInBash(script);

    expectEverySuccess(run, calledPaths(script));
  });
});
