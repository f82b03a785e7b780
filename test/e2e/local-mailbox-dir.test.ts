/**
 * The local stack's mailbox (docs/decisions.md §12): the default email transport writes under `DATA_DIR/mailbox/`
 * (local-data-permissions.test.ts checks that folder), unless EMAIL_MAILBOX_DIR names another folder, which the stack
 * then uses as it is and creates for its owner only. A file of its own: a process runs one in-process stack.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAILBOX_DIR_NAME, startLocalStack, type LocalStack } from '../../local/local-stack';

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

describe('the local mailbox folder', () => {
  let parent: string;
  let stack: LocalStack | undefined;
  const saved = process.env.EMAIL_MAILBOX_DIR;

  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), 'collab-mailbox-'));
  });

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
    if (saved === undefined) delete process.env.EMAIL_MAILBOX_DIR;
    else process.env.EMAIL_MAILBOX_DIR = saved;
    rmSync(parent, { recursive: true, force: true });
  });

  it('is EMAIL_MAILBOX_DIR when set, created with its missing parents for the owner only, and nothing under the data folder', async () => {
    const dataDir = join(parent, 'data');
    const mailboxDir = join(parent, 'elsewhere', 'mail');
    process.env.EMAIL_MAILBOX_DIR = mailboxDir;

    stack = await startLocalStack({ port: 0, dataDir });

    expect(process.env.EMAIL_MAILBOX_DIR).toBe(mailboxDir);
    expect([modeOf(join(parent, 'elsewhere')), modeOf(mailboxDir)]).toEqual(['700', '700']);
    expect(existsSync(join(dataDir, MAILBOX_DIR_NAME))).toBe(false);
  });
});
