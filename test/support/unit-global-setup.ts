/**
 * Unit tier: one local keys file for the whole run (the envelope-encryption modules read it at load), removed when
 * Jest exits. Made here once rather than by each test file, which left a temporary folder behind per file. When the
 * developer's LOCAL_KEYS_FILE is set, or another tier's setup made one, that file is used.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureLocalKeysFile } from '../../shared/crypto/local-keys';

export default function globalSetup(): void {
  if (process.env.LOCAL_KEYS_FILE) return;
  const dir = mkdtempSync(join(tmpdir(), 'unit-keys-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'local-keys.json');
  ensureLocalKeysFile(file);
  process.env.LOCAL_KEYS_FILE = file;
}
