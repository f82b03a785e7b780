/** The operator CLI against the running local stack, with no flags (it finds the stack through DATA_DIR). */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { post } from '../support/http';
import { uniqueEmail } from '../support/ids';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

async function admin(...args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR };
  delete env.TABLE_NAME;
  const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'bin', 'admin.ts'), ...args], {
    cwd: ROOT,
    env,
  });
  return stdout.trim();
}

describe('operator CLI against the local stack', () => {
  it('puts a workspace on the paid plan so its owner can create a second one over HTTP', async () => {
    const ownerEmail = uniqueEmail('admin');
    const root = await post('/v2/workspace/create', { ownerEmail });
    const refused = await post('/v2/workspace/create', { ownerEmail, workspaceName: 'Second' });

    const apiKeyId = await admin('production-key', '--workspace', root.body.result.data.id);
    const second = await post('/v2/workspace/create', { ownerEmail, workspaceName: 'Second' });
    const listed = JSON.parse(await admin('workspaces', '--email', ownerEmail, '--json')) as Array<{
      workspaceId: string;
    }>;

    expect(refused.status).toBe(403);
    expect(apiKeyId).toMatch(/^key_/);
    expect(second.status).toBe(200);
    expect(listed.map((w) => w.workspaceId).sort()).toEqual(
      [root.body.result.data.id, second.body.result.data.id].sort(),
    );
  });
});
