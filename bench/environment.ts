import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The benchmarks' environment, set before anything reads it: imported first by harness.ts, because the local stack
 * it imports loads the service's logger (which reads POWERTOOLS_LOG_LEVEL once, when it is built) and its config.
 * Set inside startBenchStack, these came too late and every request logged a line at INFO into the tables' output.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.WORKSPACE_CREATE_LIMIT_PER_HOUR ??= '0';
// The webhooks suite's retry schedule runs 60× faster (bench/webhooks.ts), which no other suite depends on.
process.env.WEBHOOK_SCHEDULE_DIVISOR ??= '60';
// The emails suite counts the files of the local mailbox (bench/emails.ts).
process.env.EMAIL_MAILBOX_DIR ??= mkdtempSync(join(tmpdir(), 'bench-mailbox-'));
