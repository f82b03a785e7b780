/**
 * Unit tier: no I/O. Modules that read configuration at load get harmless values; nothing here is ever called
 * over the network (a unit test that did so would fail to connect).
 */
process.env.TABLE_NAME ??= 'unit-tests';
// Forced, not defaulted: connected runs in the same jest process set a real endpoint, and a unit test must not reach it.
process.env.DYNAMODB_ENDPOINT = 'http://127.0.0.1:9';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
if (!process.env.LOCAL_KEYS_FILE)
  throw new Error('No LOCAL_KEYS_FILE: unit tests need test/support/unit-global-setup.ts.');
