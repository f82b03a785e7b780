import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { handler as createWorkspace } from '../../functions/workspace/create';
import { getApiKey } from '../../shared/db/api-key';
import { PAGE_TOKEN_SECRET, readServerSecret } from '../../shared/db/server-secret';
import { getWorkspace } from '../../shared/db/workspace';
import { newTenant } from '../support/fixtures';
import { invoke } from '../support/invoke';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/** Runs the operator CLI against this test file's table, as an operator would against a table in AWS. */
async function admin(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      join(ROOT, 'node_modules', '.bin', 'tsx'),
      [join(ROOT, 'bin', 'admin.ts'), ...args],
      {
        cwd: ROOT,
        env: { ...process.env },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('operator CLI', () => {
  it('issues a production key that puts the workspace on the paid plan and allows a second workspace', async () => {
    const tenant = await newTenant();

    const result = await admin('production-key', '--workspace', tenant.workspaceId);

    expect(result.code).toBe(0);
    const apiKeyId = result.stdout.trim();
    expect((await getApiKey(tenant.workspaceId, apiKeyId))?.type).toBe('production');
    expect((await getWorkspace(tenant.workspaceId))?.plan).toBe('paid');
    const second = await invoke(createWorkspace, '/v2/workspace/create', {
      ownerEmail: tenant.email,
      workspaceName: 'Second',
    });
    expect(second.statusCode).toBe(200);
  });

  it('lists the workspaces of an email, case-insensitively', async () => {
    const tenant = await newTenant();

    const result = await admin('workspaces', '--email', tenant.email.toUpperCase(), '--json');

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      { workspaceId: tenant.workspaceId, workspaceName: `${tenant.email} workspace` },
    ]);
  });

  it('fails with a clear message for an unknown workspace', async () => {
    const result = await admin('production-key', '--workspace', 'ws_unknown');

    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe('Workspace not found.');
  });

  it('rotates the page-token key, keeping the old value as the previous one', async () => {
    const before = await readServerSecret(PAGE_TOKEN_SECRET);

    const result = await admin('rotate-page-token-key');
    const after = await readServerSecret(PAGE_TOKEN_SECRET);

    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Rotated the page-token key.');
    expect(after.current.equals(before.current)).toBe(false);
    expect(after.previous?.equals(before.current)).toBe(true);
  });

  it('prints the usage for an unknown command', async () => {
    const result = await admin('frobnicate');

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('production-key --workspace');
  });
});
