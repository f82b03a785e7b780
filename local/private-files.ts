/**
 * The local stack's data folder holds every tenant's data, the key that decrypts their secrets and the state file
 * the operator CLI reads: what the stack creates there is for its owner only (folders 0700, files 0600). What
 * already exists keeps its mode: it may be deliberate (a shared group, a backup tool), so the stack says on start
 * what is more open and how to close it, and changes nothing itself (docs/operating.md, "Security of the local stack").
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** Group and other bits: a single one set makes a folder or file readable (or writable) by other users. */
const OPEN_BITS = 0o077;

/** The data folder's entries the stack keeps (see local/local-stack.ts): the database folder and the keys file. */
export const DATABASE_DIR_NAME = 'dynamodb';
export const KEYS_FILE_NAME = 'local-keys.json';

/**
 * Creates `dir` and its missing parents with mode 0700. An existing folder is left as it is (see above). The mode is
 * set again after creation because mkdir applies the process umask to it.
 */
export function ensurePrivateDir(folder: string): void {
  const dir = resolve(folder);
  if (existsSync(dir)) return;
  const created = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  // mkdirSync returns the first folder it created: it and everything below it to `dir` are ours.
  for (let path = dir; created !== undefined; path = dirname(path)) {
    chmodSync(path, PRIVATE_DIR_MODE);
    if (path === created) break;
  }
}

/**
 * Replaces `file` with `content`, mode 0600, in one rename: a reader sees the old file or the new one, never half of
 * one, and a file left 0644 by an earlier version does not keep its mode (writeFile keeps an existing file's mode).
 */
export function writePrivateFile(file: string, content: string): void {
  const temporary = join(dirname(file), `.${randomUUID()}.tmp`);
  try {
    writeFileSync(temporary, content, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    renameSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}

export interface OpenPath {
  path: string;
  /** Permission bits, e.g. 0o755. */
  mode: number;
  /** 0o700 for a folder, 0o600 for a file. */
  wanted: number;
}

/**
 * The folders and files of the data folder that other users of this machine may read or write: the data folder, its
 * database folder and files, the keys file. Missing ones are skipped.
 */
export function findOpenPaths(dataDir: string): OpenPath[] {
  const databaseDir = join(dataDir, DATABASE_DIR_NAME);
  const candidates = [dataDir, databaseDir, join(dataDir, KEYS_FILE_NAME)];
  if (isDirectory(databaseDir)) candidates.push(...readdirSync(databaseDir).map((name) => join(databaseDir, name)));
  const open: OpenPath[] = [];
  for (const path of candidates) {
    if (!existsSync(path)) continue;
    const stats = statSync(path);
    const mode = stats.mode & 0o777;
    if ((mode & OPEN_BITS) !== 0)
      open.push({ path, mode, wanted: stats.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE });
  }
  return open;
}

/** The warning printed on start for `findOpenPaths`' result; undefined when nothing is open. */
export function openPathsWarning(dataDir: string, open: readonly OpenPath[]): string | undefined {
  if (open.length === 0) return undefined;
  const octal = (mode: number): string => mode.toString(8).padStart(4, '0');
  return [
    "Warning: other users of this machine can read or change the local stack's data (every tenant's items and the key",
    'that decrypts their secrets):',
    ...open.map(({ path, mode, wanted }) => `  ${path} is ${octal(mode)}, should be ${octal(wanted)}`),
    `The stack does not change the modes of existing files. To restrict them: chmod -R go-rwx ${shellQuote(dataDir)}`,
  ].join('\n');
}

/**
 * Creates the data folder (0700) when missing, and prints a warning to stderr when it, its database or its keys file
 * is more open than 0700 / 0600.
 */
export function preparePrivateDataDir(dataDir: string): void {
  ensurePrivateDir(dataDir);
  const warning = openPathsWarning(dataDir, findOpenPaths(dataDir));
  if (warning !== undefined) console.error(warning);
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/** Single quotes, so that the printed command can be pasted even when the path has spaces or `$`. */
function shellQuote(value: string): string {
  return /^[\w./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
