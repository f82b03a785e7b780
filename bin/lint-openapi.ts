/**
 * `npm run lint:openapi` (the first step of `npm test`): Redocly's recommended rules over the committed
 * openapi.json (redocly.yaml), failing on any error and on any warning. Redocly itself fails only on errors, so
 * this reads its JSON report. Also fails when the committed client types
 * (test/support/openapi-types.ts, written by openapi/client-types.ts) trail the document.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TYPES_FILE, openApiTypes } from '../openapi/client-types';

const root = join(__dirname, '..');
const run = spawnSync(
  join(root, 'node_modules', '.bin', 'redocly'),
  ['lint', 'openapi.json', '--config', 'redocly.yaml', '--format=json'],
  {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  },
);
const report = JSON.parse(run.stdout) as {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }>;
};
for (const problem of report.problems)
  console.error(`${problem.severity} ${problem.ruleId}: ${problem.message} (${problem.location?.[0]?.pointer ?? ''})`);
console.log(
  `openapi.json: ${report.totals.errors} errors, ${report.totals.warnings} warnings (Redocly recommended rules).`,
);

async function typesAreCurrent(): Promise<boolean> {
  const current = readFileSync(TYPES_FILE, 'utf8') === (await openApiTypes());
  if (!current) console.error(`${TYPES_FILE} trails openapi.json: run npm run openapi.`);
  return current;
}

void typesAreCurrent().then((current) =>
  process.exit(current && report.totals.errors + report.totals.warnings === 0 ? 0 : 1),
);
