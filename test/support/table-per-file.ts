/**
 * Runs before each connected test file loads its modules: gives the file a table of its own (created by
 * create-table.ts), so files never see each other's data and can run in parallel.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.TABLE_NAME = `test-${randomBytes(6).toString('hex')}`;

/** A temporary folder of the file's, listed in FILE_TEMP_DIRS for create-table.ts to remove when the file ends. */
function fileTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.env.FILE_TEMP_DIRS = [process.env.FILE_TEMP_DIRS, dir].filter(Boolean).join('\n');
  return dir;
}
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
// The live metrics (shared/core/metrics.ts) are counted but not written, like the logger's lines; a test that reads
// them turns them on (test/support/live-metrics.ts).
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.WORKSPACE_CREATE_LIMIT_PER_HOUR ??= '0';
// The event pipeline (test/support/webhook-pipeline.ts): the file's own delivery queue, receivers on 127.0.0.1
// allowed, the retry schedule and CRDT debounce compressed 100,000-fold (5 s → 0.05 ms, 10 h → 0.36 s; the queue's
// one-second delay granularity then spaces the retries), and attempts that time out after 5 s instead of 15 s: long
// enough that a receiver answering on a busy machine is never taken for one that hangs (at 500 ms, an answered
// attempt was once recorded as timed out). The test of hanging receivers shortens it for itself.
process.env.DELIVERY_QUEUE_DIR ??= fileTempDir('delivery-queue-');
process.env.WEBHOOK_ALLOW_PRIVATE_URLS ??= 'true';
process.env.WEBHOOK_SCHEDULE_DIVISOR ??= '100000';
process.env.WEBHOOK_TIMEOUT_MS ??= '5000';
// Notification emails (docs/decisions.md §12): the `default` transport writes into a folder of the file's own, as on
// the local stack, and SendGrid's address is a closed local port, so no test ever calls the real SendGrid
// (test/connected/email-delivery.test.ts points it at a fake).
process.env.EMAIL_MAILBOX_DIR ??= fileTempDir('mailbox-');
process.env.SENDGRID_BASE_URL ??= 'http://127.0.0.1:9';
// DYNAMODB_LOCAL_PER_FILE: the file's own DynamoDB Local, which connected-environment.ts starts after this module.
if ((!process.env.DYNAMODB_ENDPOINT && !process.env.DYNAMODB_LOCAL_PER_FILE) || !process.env.LOCAL_KEYS_FILE) {
  throw new Error('DynamoDB Local is not running: connected tests need test/support/dynamodb-global-setup.ts.');
}
