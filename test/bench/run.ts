/** `npm run bench`: runs every benchmark suite in turn and prints its table. Not part of `npm test`. */
import { run as bundles } from './bundles';

const suites: Array<[string, () => Promise<void>]> = [['bundles', bundles]];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  for (const [name, suite] of suites) {
    if (only.length === 0 || only.includes(name)) await suite();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
