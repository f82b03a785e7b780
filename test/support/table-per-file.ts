/**
 * Runs before each connected test file loads its modules: gives the file a table of its own (created by
 * create-table.ts), so files never see each other's data and can run in parallel.
 */
import { randomBytes } from 'node:crypto';

process.env.TABLE_NAME = `test-${randomBytes(6).toString('hex')}`;
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.WORKSPACE_CREATE_LIMIT_PER_HOUR ??= '0';
if (!process.env.DYNAMODB_ENDPOINT || !process.env.LOCAL_KEYS_FILE) {
  throw new Error('DynamoDB Local is not running: connected tests need test/support/dynamodb-global-setup.ts.');
}
