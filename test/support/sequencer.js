/**
 * The order in which the run starts its test files (jest.config.js `testSequencer`), so that the workers of a
 * 2-core machine finish together instead of one running the slowest file alone at the end (issue 31 item 6).
 *
 * Jest starts the files that took longest last time first, from its cache; a fresh clone (CI) has no cache and falls
 * back to file size, which started webhook-restart (the longest file, over 3 minutes) near the end of the run. Here a
 * file's expected time is its time from Jest's cache when there is one, else its time in slow-files.json (checked
 * in: the files over about 5 s, relative times from one run each), and the files start longest first; files in
 * neither follow, largest first, as Jest orders them. A file that failed last time still starts first.
 *
 * The list's times now come from each file run alone (issue 31 item 6: once every connected file had a DynamoDB
 * Local of its own, a file's time in a full run no longer depends on the files before it), on a machine shared with
 * other work at a load of 3 to 7, and from `npm run test:quick` for the connected and unit files it runs.
 *
 * Refresh slow-files.json from a full run's output when the slow files change: `npm run test:tiers 2>&1 |
 * node test/support/slow-files.js` prints the list.
 */
const { default: Sequencer } = require('@jest/test-sequencer');
const { join, relative } = require('node:path');
const slowFiles = require('./slow-files.json');

const ROOT = join(__dirname, '..', '..');

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    // Jest's order: failed first, then by cached time, then by size.
    const byJest = super.sort([...tests]);
    const rank = new Map(byJest.map((test, index) => [test, index]));
    // In ms, as Jest's cache has it; the list is in seconds.
    const expected = (test) => {
      const listed = slowFiles[relative(ROOT, test.path).split('\\').join('/')];
      return test.duration ?? (listed === undefined ? undefined : listed * 1000);
    };
    return byJest.sort((a, b) => {
      const failedA = this.hasFailed(a);
      if (failedA !== this.hasFailed(b)) return failedA ? -1 : 1;
      const timeA = expected(a);
      const timeB = expected(b);
      if ((timeA === undefined) !== (timeB === undefined)) return timeA === undefined ? 1 : -1;
      if (timeA !== undefined && timeB !== undefined && timeA !== timeB) return timeB - timeA;
      return rank.get(a) - rank.get(b);
    });
  }
}

module.exports = SlowFirstSequencer;
