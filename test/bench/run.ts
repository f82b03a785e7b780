/** `npm run bench`: runs every benchmark suite in turn and prints its table. Not part of `npm test`. */
// First: the environment the suites' modules read when they load (test/bench/environment.ts).
import './environment';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run as activities } from './activities';
import { run as ai } from './ai';
import { run as bundles } from './bundles';
import { run as crdt } from './crdt';
import { run as emails } from './emails';
import { run as migration } from './migration';
import { run as notifications } from './notifications';
import { run as suggest } from './suggest';
import { run as users } from './users';
import { run as warm } from './warm';
import { run as webhooks } from './webhooks';

const suites: Array<[string, () => Promise<void>]> = [
  ['bundles', bundles],
  ['users', users],
  ['notifications', notifications],
  ['activities', activities],
  ['crdt', crdt],
  ['migration', migration],
  ['ai', ai],
  ['suggest', suggest],
  ['webhooks', webhooks],
  ['emails', emails],
  ['warm', warm],
];

async function main(): Promise<void> {
  // Read once per process, when the first suite starts its stack: the webhooks suite's schedule runs 60× faster
  // (test/bench/webhooks.ts), which no other suite depends on.
  process.env.WEBHOOK_SCHEDULE_DIVISOR ??= '60';
  // The emails suite counts the files of the local mailbox (test/bench/emails.ts).
  process.env.EMAIL_MAILBOX_DIR ??= mkdtempSync(join(tmpdir(), 'bench-mailbox-'));
  const only = process.argv.slice(2);
  for (const [name, suite] of suites) {
    if (only.length === 0 || only.includes(name)) await suite();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
