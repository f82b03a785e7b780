/**
 * The local stack's delivery queue (shared/adapters/queue/queue.ts): a folder of files standing in for SQS, durable across
 * `kill -9` and restarts, at least once. local/queue-poller.ts hands its jobs to the same SQS handler that runs
 * in AWS.
 *
 * One job is one file, `<due time, ms, 15 digits>-<id>-<receive count>.json`, holding `{id, body, sentAt}`:
 * - Listing the folder sorted by name lists the jobs by due time; a job is handed out once its due time has come.
 * - A job is written to a temporary name, flushed and renamed into place (shared/adapters/files/atomic-file.ts), so a process
 *   killed at any moment leaves no job or a whole one. Temporary files are skipped, and removed once their writer
 *   has gone.
 * - Receiving renames the file to a due time one visibility timeout later with the receive count plus one: the
 *   rename is the lease. It is atomic, so two consumers (in one process or several) never get the same job; the
 *   loser's rename fails and it moves on. A job that is not acknowledged within the visibility timeout (a failed
 *   handler, a killed process) is due again, as with SQS. The count lives in the name, not the content, so that
 *   taking a lease is that one rename, with nothing to rewrite.
 * - Acknowledging deletes the file; releasing renames it to a new due time.
 */
import { readFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { forEachLimited } from '../../core/concurrency';
import { isAbandonedTemporaryName, syncFolder, writeFileAtomically } from '../files/atomic-file';
import { timeOrderedId } from '../../core/ids';
import { logger } from '../../core/logger';
import type { JobQueue, QueuedJob } from './queue';

/** SQS's default visibility timeout: how long a received job stays hidden before it is handed out again. */
export const DEFAULT_VISIBILITY_TIMEOUT_MS = 60_000;
/** The local dead-letter queue: a sub-folder of the queue's folder (see local/queue-poller.ts). */
export const DEAD_LETTER_DIR_NAME = 'dead-letter';

const DUE_DIGITS = 15;
const JOB_NAME = /^(\d{15})-([0-9A-Za-z]+)-(\d+)\.json$/;
/** Files written at once by one send: enough to overlap the flushes, few enough not to run out of descriptors. */
const WRITE_CONCURRENCY = 16;

export interface ReceivedJob {
  /** The job's id, the same on every receive (SQS's messageId). */
  readonly id: string;
  /** The job, as sent. */
  readonly body: string;
  /** How many times the job has been handed out, this time included (SQS's ApproximateReceiveCount). */
  readonly receiveCount: number;
  /** When it was sent, in ms since the epoch. */
  readonly sentAt: number;
  /** The leased file's name; stale once the lease has expired and another receive has taken the job. */
  readonly receiptHandle: string;
}

export interface FileQueueOptions {
  /** How long a received job stays hidden from other receives; default 60 s. Tests shorten it. */
  visibilityTimeoutMs?: number;
}

export interface FileQueue extends JobQueue {
  /** The queue's folder. */
  readonly dir: string;
  /**
   * Leases up to `max` jobs due at `now`, earliest first. Each is hidden for the visibility timeout, then handed out
   * again unless acknowledged. Throws what the file system throws, except for jobs another consumer took first.
   */
  receive(max: number, now?: number): Promise<ReceivedJob[]>;
  /**
   * The due time of the earliest job the last receive found not yet due (or left for lack of room), undefined when
   * it found none: how long a consumer may sleep when nothing new is sent.
   */
  nextDueAt(): number | undefined;
  /** Deletes a received job. A lease that has expired meanwhile is not an error: the job is handed out again. */
  ack(job: ReceivedJob): Promise<void>;
  /** Puts a received job back, due in `delaySeconds`, keeping its receive count; nothing when the lease is lost. */
  release(job: ReceivedJob, delaySeconds: number, now?: number): Promise<void>;
  /** Moves a received job to the dead-letter folder; returns its path there, undefined when the lease was lost. */
  deadLetter(job: ReceivedJob): Promise<string | undefined>;
}

interface JobFile {
  id: string;
  body: string;
  sentAt: number;
}

function jobFileName(dueAt: number, id: string, receiveCount: number): string {
  return `${String(Math.max(0, Math.ceil(dueAt))).padStart(DUE_DIGITS, '0')}-${id}-${receiveCount}.json`;
}

function parseJobFileName(name: string): { dueAt: number; id: string; receiveCount: number } | undefined {
  const match = JOB_NAME.exec(name);
  return match === null ? undefined : { dueAt: Number(match[1]), id: match[2], receiveCount: Number(match[3]) };
}

function isJobFile(value: unknown): value is JobFile {
  if (typeof value !== 'object' || value === null) return false;
  const job = value as Record<string, unknown>;
  return typeof job.id === 'string' && typeof job.body === 'string' && typeof job.sentAt === 'number';
}

function checkDelay(delaySeconds: number): void {
  if (!Number.isFinite(delaySeconds) || delaySeconds < 0) {
    throw new RangeError(`A job's delaySeconds must be a non-negative number, got ${delaySeconds}.`);
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * The file queue in `dir` (created, owner only, on first send). Delays longer than SQS's 15 minutes are kept as
 * they are here, but callers keep to MAX_DELAY_SECONDS so that the code runs unchanged on SQS.
 */
export function fileQueue(dir: string, options: FileQueueOptions = {}): FileQueue {
  const visibilityTimeoutMs = options.visibilityTimeoutMs ?? DEFAULT_VISIBILITY_TIMEOUT_MS;
  const deadLetterDir = join(dir, DEAD_LETTER_DIR_NAME);
  let created: Promise<unknown> | undefined;
  const ensureDir = (): Promise<unknown> =>
    (created ??= mkdir(dir, { recursive: true, mode: 0o700 }).catch((error: unknown) => {
      created = undefined;
      throw error;
    }));
  let nextDue: number | undefined;

  return {
    dir,

    async send(jobs: readonly QueuedJob[]): Promise<void> {
      for (const job of jobs) checkDelay(job.delaySeconds);
      if (jobs.length === 0) return;
      await ensureDir();
      const now = Date.now();
      await forEachLimited(jobs, WRITE_CONCURRENCY, async (job) => {
        const id = timeOrderedId('', now);
        const content: JobFile = { id, body: job.body, sentAt: now };
        await writeFileAtomically(
          join(dir, jobFileName(now + job.delaySeconds * 1000, id, 0)),
          JSON.stringify(content),
        );
      });
      // One flush of the folder for the whole send: the renames above are on disk before send resolves.
      await syncFolder(dir);
    },

    async receive(max: number, now = Date.now()): Promise<ReceivedJob[]> {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (isMissing(error)) return [];
        throw error;
      }
      const jobNames: string[] = [];
      for (const name of names) {
        if (JOB_NAME.test(name)) jobNames.push(name);
        else if (isAbandonedTemporaryName(name)) await rm(join(dir, name), { force: true });
      }
      // Fixed-width due times first: name order is due order.
      jobNames.sort();

      const received: ReceivedJob[] = [];
      nextDue = undefined;
      for (const name of jobNames) {
        const parsed = parseJobFileName(name);
        if (parsed === undefined) continue;
        if (parsed.dueAt > now || received.length >= max) {
          nextDue = parsed.dueAt;
          break;
        }
        const receiveCount = parsed.receiveCount + 1;
        const leased = jobFileName(now + visibilityTimeoutMs, parsed.id, receiveCount);
        try {
          await rename(join(dir, name), join(dir, leased));
        } catch (error) {
          // Another consumer leased or acknowledged it after our listing.
          if (isMissing(error)) continue;
          throw error;
        }
        const job = await readJob(leased);
        if (job === undefined) continue;
        received.push({ id: parsed.id, body: job.body, sentAt: job.sentAt, receiveCount, receiptHandle: leased });
      }
      return received;
    },

    nextDueAt: () => nextDue,

    async ack(job: ReceivedJob): Promise<void> {
      await rm(join(dir, job.receiptHandle), { force: true });
    },

    async release(job: ReceivedJob, delaySeconds: number, now = Date.now()): Promise<void> {
      checkDelay(delaySeconds);
      try {
        await rename(
          join(dir, job.receiptHandle),
          join(dir, jobFileName(now + delaySeconds * 1000, job.id, job.receiveCount)),
        );
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    },

    async deadLetter(job: ReceivedJob): Promise<string | undefined> {
      return moveToDeadLetter(job.receiptHandle);
    },
  };

  async function moveToDeadLetter(name: string): Promise<string | undefined> {
    await mkdir(deadLetterDir, { recursive: true, mode: 0o700 });
    const target = join(deadLetterDir, name);
    try {
      await rename(join(dir, name), target);
      return target;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** A leased job's content; one that is not a job (written by something else) goes to the dead-letter folder. */
  async function readJob(name: string): Promise<JobFile | undefined> {
    let text: string;
    try {
      text = await readFile(join(dir, name), 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (isJobFile(parsed)) return parsed;
    const target = await moveToDeadLetter(name);
    logger.error('File queue: a file that is not a job was moved to the dead-letter folder', { file: target });
    return undefined;
  }
}
