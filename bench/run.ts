/** `npm run bench`: runs every benchmark suite in turn and prints its table. Not part of `npm test`. */
// First: the environment the suites' modules read when they load (bench/environment.ts).
import './environment';
import { spawnSync } from 'node:child_process';
import { run as activities } from './activities';
import { run as activityLayouts } from './activity-layouts';
import { run as ai } from './ai';
import { run as bundles } from './bundles';
import { run as commentAnchors } from './comment-anchors';
import { run as comments } from './comments';
import { run as cost } from './cost';
import { run as crdt, runLiveEdits as crdtEdits } from './crdt';
import { run as emails } from './emails';
import { run as live } from './live';
import { run as migration } from './migration';
import { run as notifications } from './notifications';
import { run as suggest } from './suggest';
import { run as users } from './users';
import { run as versions } from './versions';
import { run as warm } from './warm';
import { run as webhooks } from './webhooks';

const suites: Array<[string, () => Promise<void>]> = [
  ['bundles', bundles],
  ['users', users],
  ['notifications', notifications],
  ['activities', activities],
  ['activity-layouts', activityLayouts],
  ['crdt', crdt],
  ['crdt-edits', crdtEdits],
  ['comment-anchors', commentAnchors],
  ['comments', comments],
  ['versions', versions],
  ['migration', migration],
  ['ai', ai],
  ['suggest', suggest],
  ['webhooks', webhooks],
  ['emails', emails],
  ['live', live],
  ['cost', cost],
  ['warm', warm],
];

/**
 * One suite runs in this process; several run one after another, each in a process of its own: the service's
 * modules read their configuration (the table, DynamoDB Local's port) once, so a second stack in one process would
 * talk to the first one's stopped database.
 */
async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const selected = suites.filter(([name]) => only.length === 0 || only.includes(name));
  if (selected.length === 1) {
    await selected[0][1]();
    return;
  }
  for (const [name] of selected) {
    const { status } = spawnSync(process.execPath, [...process.execArgv, __filename, name], { stdio: 'inherit' });
    if (status !== 0) throw new Error(`Bench suite ${name} failed (exit ${status}).`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
