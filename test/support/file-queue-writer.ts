/**
 * Child process of the file queue's `kill -9` test (test/unit/file-queue.test.ts): sends `count` jobs to the file
 * queue in `dir`, one send at a time, as fast as it can, and prints the number stored after each send resolves.
 * Usage: tsx test/support/file-queue-writer.ts <dir> <count>
 */
import { fileQueue } from '../../shared/adapters/queue/file-queue';

async function main(): Promise<void> {
  const [dir, countText] = process.argv.slice(2);
  const queue = fileQueue(dir);
  const count = Number(countText);
  for (let n = 0; n < count; n += 1) {
    await queue.send([{ body: JSON.stringify({ n }), delaySeconds: 0 }]);
    // Synchronous on a pipe (Node writes to pipes synchronously on POSIX): a printed count was stored.
    process.stdout.write(`${n + 1}\n`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
