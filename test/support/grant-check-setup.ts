/**
 * connected tier: every handler call (test/support/invoke.ts, and the worker and deploy-task helpers) runs under the
 * grant check (local/grant-check.ts), and a test fails when a handler sent a command its route is not granted,
 * naming the route, the command and the missing grant.
 */
import { describeViolation, installGrantCheck, takeViolations } from '../../local/grant-check';
import { kmsClient } from '../../shared/crypto/encryption';
import { TABLE_NAME, dynamodb } from '../../shared/db/client';

installGrantCheck({ dynamodb, kms: kmsClient(), table: TABLE_NAME });

afterEach(() => {
  const violations = takeViolations();
  if (violations.length > 0) throw new Error([...new Set(violations.map(describeViolation))].join('\n'));
});
