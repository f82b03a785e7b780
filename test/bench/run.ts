/** `npm run bench`: runs every benchmark suite in turn and prints its table. Not part of `npm test`. */
// First: the environment the suites' modules read when they load (test/bench/environment.ts).
import './environment';
import { run as activities } from './activities';
import { run as ai } from './ai';
import { run as bundles } from './bundles';
import { run as cost } from './cost';
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
  ['cost', cost],
  ['warm', warm],
];

async function main(): Promise<void> {
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
