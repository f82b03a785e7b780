/**
 * Reads a full run's output (`npm run test:tiers 2>&1 | node test/support/slow-files.js`) and prints slow-files.json:
 * each file Jest reported a time for (those over about 5 s), in seconds, longest first. test/support/sequencer.js
 * starts them in that order.
 */
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => (input += chunk));
process.stdin.on('end', () => {
  const times = {};
  for (const match of input.matchAll(/^(?:PASS|FAIL) \S+ (\S+\.test\.ts) \(([\d.]+) s\)$/gm))
    times[match[1]] = Math.round(Number(match[2]));
  const sorted = Object.entries(times).sort(([, a], [, b]) => b - a);
  process.stdout.write(`${JSON.stringify(Object.fromEntries(sorted), null, 2)}\n`);
});
