/**
 * Files replaced in one step: the content goes to a temporary file in the same folder, is flushed to disk, and is
 * renamed over the target. A reader, or a process started after a `kill -9` or a power cut at any moment, finds
 * the old file or the new one, never part of one. Used by the local stand-ins for AWS services (the file queue,
 * the stream checkpoint, the mailbox), which must survive the local stack being killed.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Temporary names start with a dot and carry the writer's pid, so a reader can skip them and tell abandoned ones. */
const TEMPORARY_NAME = /^\..*\.tmp-(\d+)-[0-9a-f]+$/;

export function temporaryNameFor(file: string): string {
  return join(dirname(file), `.${basename(file)}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
}

/**
 * Whether `name` (a folder entry) is a temporary file of writeFileAtomically whose writer is no longer running: a
 * leftover of a process killed mid-write, safe to delete. False for other names and for live writers' files.
 */
export function isAbandonedTemporaryName(name: string): boolean {
  const match = TEMPORARY_NAME.exec(name);
  if (match === null) return false;
  const pid = Number(match[1]);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export interface AtomicWriteOptions {
  /** Mode of a new file; default 0600 (what the local stack keeps is for its owner only). */
  mode?: number;
  /** Also flush the folder, so that the rename itself survives a power cut; callers writing many files do it once. */
  syncFolder?: boolean;
}

/**
 * Writes `content` (text as UTF-8, or bytes as they are) to `file` atomically (see above). Throws what the file
 * system throws (a missing folder, a full disk); the temporary file is removed then, and the target is unchanged.
 */
export async function writeFileAtomically(
  file: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temporary = temporaryNameFor(file);
  try {
    const handle = await open(temporary, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(content, typeof content === 'string' ? 'utf8' : undefined);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  if (options.syncFolder === true) await syncFolder(dirname(file));
}

/** Flushes a folder's entries (new names, renames) to disk. */
export async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
