/**
 * A write that answers success is read back (issue 29 item 7), over HTTP against the local stack, whose stream
 * poller runs the profile-copies consumer meanwhile. On a busy machine the consumer, still handling the record of
 * an earlier write, used to write that earlier name over the one the next write had just put on the membership, so
 * a Get Users right after a successful Update Users showed the old name (5 of 40 tries). Two CPU burners keep both
 * cores busy while the tests run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { newApiKeyHeaders as apiKeyHeaders, post } from '../support/http';
import { uniqueId } from '../support/ids';

const TRIES = 40;

type Listed = { userId: string; name?: string; initial?: string };

/** The name Get Users shows for `userId` at the level `level` names. */
async function nameAt(
  headers: Record<string, string>,
  level: Record<string, unknown>,
  userId: string,
): Promise<string | undefined> {
  const reply = await post('/v2/users/get', { ...level, userIds: [userId] }, headers);
  return (reply.body.result.data as Listed[]).find((user) => user.userId === userId)?.name;
}

describe('a user written is read back at once, under load', () => {
  const burners: ChildProcess[] = [];

  beforeAll(() => {
    // One busy process per core, as other work on a shared machine would be.
    for (let i = 0; i < 2; i += 1) burners.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  });

  afterAll(() => {
    for (const burner of burners) burner.kill('SIGKILL');
  });

  it('shows the new name in every Get Users that follows an Update Users at the organization', async () => {
    const headers = await apiKeyHeaders();
    const organizationId = uniqueId('org');
    await post(
      '/v2/users/add',
      { organizationId, users: [{ userId: 'u1', name: 'name-start', email: 'u1@x.io' }] },
      headers,
    );
    // Memberships at other levels, so the consumer has copies to write for every change.
    await post(
      '/v2/users/add',
      { organizationId, documentId: 'd1', createDocument: true, users: [{ userId: 'u1' }] },
      headers,
    );
    await post(
      '/v2/users/add',
      { organizationId, folderId: 'f1', createFolder: true, users: [{ userId: 'u1' }] },
      headers,
    );
    const stale: string[] = [];

    for (let i = 0; i < TRIES; i += 1) {
      const name = `name-${i}`;
      const updated = await post('/v2/users/update', { organizationId, users: [{ userId: 'u1', name }] }, headers);
      expect(updated.body.result.data.u1.success).toBe(true);
      const shown = await nameAt(headers, { organizationId }, 'u1');
      if (shown !== name) stale.push(`try ${i}: wrote ${name}, read ${String(shown)}`);
    }

    expect(stale).toEqual([]);
  });

  it('shows the new name at the level written, for Update Users at a document and Add Users re-adding at a folder', async () => {
    const headers = await apiKeyHeaders();
    const organizationId = uniqueId('org');
    await post('/v2/users/add', { organizationId, users: [{ userId: 'u1', name: 'name-start' }] }, headers);
    await post(
      '/v2/users/add',
      { organizationId, documentId: 'd1', createDocument: true, users: [{ userId: 'u1' }] },
      headers,
    );
    await post(
      '/v2/users/add',
      { organizationId, folderId: 'f1', createFolder: true, users: [{ userId: 'u1' }] },
      headers,
    );
    const stale: string[] = [];

    for (let i = 0; i < TRIES; i += 1) {
      const name = `name-${i}`;
      const level = i % 2 === 0 ? { organizationId, documentId: 'd1' } : { organizationId, folderId: 'f1' };
      const written =
        i % 2 === 0
          ? await post('/v2/users/update', { ...level, users: [{ userId: 'u1', name }] }, headers)
          : await post('/v2/users/add', { ...level, users: [{ userId: 'u1', name }] }, headers);
      expect(written.body.result.data.u1.success).toBe(true);
      const shown = await nameAt(headers, level, 'u1');
      if (shown !== name) stale.push(`try ${i}: wrote ${name} at ${JSON.stringify(level)}, read ${String(shown)}`);
    }

    expect(stale).toEqual([]);
  });
});
