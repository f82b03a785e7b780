/**
 * Imported first by the connected test files that run the event pipeline, so the handlers load with these
 * settings: the file queue in a temporary folder, receivers on 127.0.0.1 allowed (unless the file set it
 * already), and the retry schedule and CRDT debounce compressed 100,000-fold (5 s → 0.05 ms, 10 h → 0.36 s; the
 * queue's one-second delay granularity then spaces the retries) unless the file set another divisor.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.DELIVERY_QUEUE_DIR ??= mkdtempSync(join(tmpdir(), 'delivery-queue-'));
process.env.WEBHOOK_ALLOW_PRIVATE_URLS ??= 'true';
process.env.WEBHOOK_SCHEDULE_DIVISOR ??= '100000';
process.env.WEBHOOK_TIMEOUT_MS ??= '500';
