/**
 * The data folder of the local stack holds every tenant's data and the key to their secrets: what the stack creates
 * there is for its owner only, and what already exists more open than that is reported on start (and left as it is).
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DELIVERY_QUEUE_DIR_NAME,
  MAILBOX_DIR_NAME,
  startLocalStack,
  STATE_FILE_NAME,
  type LocalStack,
} from '../../local/local-stack';
import { ensureLocalKeysFile } from '../../shared/crypto/local-keys';

function modeOf(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

describe('local stack data folder', () => {
  let parent: string;
  let stack: LocalStack | undefined;
  let stderr: jest.SpyInstance;

  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), 'collab-permissions-'));
    stderr = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
    stderr.mockRestore();
    rmSync(parent, { recursive: true, force: true });
  });

  function warnings(): string {
    return stderr.mock.calls.map((call: unknown[]) => call.map(String).join(' ')).join('\n');
  }

  it('creates a fresh data folder, its database folder and files, keys and state file for the owner only', async () => {
    const dataDir = join(parent, 'data');

    stack = await startLocalStack({ port: 0, dataDir });

    const databaseDir = join(dataDir, 'dynamodb');
    const databaseFiles = readdirSync(databaseDir);
    // The table exists by now, so DynamoDB Local has written its database file.
    expect(databaseFiles.length).toBeGreaterThan(0);
    expect({
      dataDir: modeOf(dataDir),
      databaseDir: modeOf(databaseDir),
      queueDir: modeOf(join(dataDir, DELIVERY_QUEUE_DIR_NAME)),
      mailboxDir: modeOf(join(dataDir, MAILBOX_DIR_NAME)),
      keys: modeOf(join(dataDir, 'local-keys.json')),
      state: modeOf(join(dataDir, STATE_FILE_NAME)),
    }).toEqual({ dataDir: '700', databaseDir: '700', queueDir: '700', mailboxDir: '700', keys: '600', state: '600' });
    expect(process.env.EMAIL_MAILBOX_DIR).toBe(join(dataDir, MAILBOX_DIR_NAME));
    expect(databaseFiles.map((name) => `${name} ${modeOf(join(databaseDir, name))}`)).toEqual(
      databaseFiles.map((name) => `${name} 600`),
    );
    expect(warnings()).not.toContain('Warning');
  });

  it('warns on start about an existing data folder (0755) and keys file (0644) and leaves their modes alone', async () => {
    const dataDir = join(parent, 'data');
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const keysFile = join(dataDir, 'local-keys.json');
    ensureLocalKeysFile(keysFile);
    chmodSync(keysFile, 0o644);
    // DynamoDB Local's port is taken, so the start fails right after the data folder is checked, before any
    // java starts: the warning is what this test is about.
    const blocker = await listenOnLoopback();
    const port = (blocker.address() as { port: number }).port;

    try {
      await expect(startLocalStack({ port: 0, dataDir, dynamodbPort: port })).rejects.toThrow(
        `port ${port} is already in use`,
      );
    } finally {
      await new Promise((resolveClose) => blocker.close(resolveClose));
    }

    expect(warnings()).toContain('Warning: other users of this machine can read or change the local stack');
    expect(warnings()).toContain(`${dataDir} is 0755, should be 0700`);
    expect(warnings()).toContain(`${keysFile} is 0644, should be 0600`);
    expect(warnings()).toContain(`chmod -R go-rwx ${dataDir}`);
    expect([modeOf(dataDir), modeOf(keysFile)]).toEqual(['755', '644']);
  });
});

function listenOnLoopback(): Promise<Server> {
  return new Promise((resolveListen, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen(server));
  });
}
