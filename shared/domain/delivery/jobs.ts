/**
 * The jobs of the delivery queue (shared/adapters/queue/queue.ts), of every kind: one attempt of a webhook delivery
 * (shared/domain/webhooks/delivery.ts), one emission of an editor's debounced `crdt.update_data`
 * (shared/domain/webhooks/publish.ts), or one attempt of an email (shared/domain/email/send.ts: emails ride the same
 * queue and schedule, docs/decisions.md §12). Delivery belongs to neither webhooks nor email: both use it, and the
 * worker (functions/workers/delivery.ts) runs every kind. A job carries when it is due; the queue holds a job at most
 * MAX_DELAY_SECONDS, so a longer wait is served in hops: the worker puts a job that is not due yet back with what
 * is left of the wait.
 */
import { MAX_DELAY_SECONDS, type JobQueue } from '../../adapters/queue/queue';
import type { DecryptSecret } from '../../crypto/encryption';
import type { EditorOfDocument } from '../../db/webhook-message';

export type DeliveryJob =
  | {
      kind: 'deliver';
      apiKeyId: string;
      messageId: string;
      endpointId: string;
      /** The attempt to make, from 1. */ attempt: number;
      /** ms */ dueAt: number;
    }
  | ({
      kind: 'editor';
      apiKeyId: string;
      /** The change count of the last emission; absent for the first. */ emitted?: number;
      dueAt: number;
    } & EditorOfDocument)
  | {
      kind: 'email';
      apiKeyId: string;
      emailId: string;
      /** The attempt to make, from 1. */ attempt: number;
      /** ms */ dueAt: number;
    };

/** A job this close to due (ms) runs now rather than waiting for another hop. */
const DUE_SLACK_MS = 500;

export const isDue = (job: DeliveryJob, now: number) => job.dueAt - now <= DUE_SLACK_MS;

/** What the worker hands each job's code: the queue for follow-up jobs, the (cached) decryption of the secrets it signs or sends with. */
export interface JobDeps {
  queue: JobQueue;
  /** shared/crypto/encryption.ts `decryptSecret`, cached by the worker. */
  decrypt: DecryptSecret;
  now?: () => number;
}

export async function enqueue(queue: JobQueue, jobs: readonly DeliveryJob[], now = Date.now()): Promise<void> {
  if (jobs.length === 0) return;
  await queue.send(
    jobs.map((job) => ({
      body: JSON.stringify(job),
      delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil((job.dueAt - now) / 1000))),
    })),
  );
}

/** A job read back from the queue; throws on a body that is not one (the worker reports it failed). */
export function parseJob(body: string): DeliveryJob {
  const job = JSON.parse(body) as DeliveryJob;
  if (
    (job.kind !== 'deliver' && job.kind !== 'editor' && job.kind !== 'email') ||
    typeof job.apiKeyId !== 'string' ||
    typeof job.dueAt !== 'number'
  ) {
    throw new Error('Not a delivery job.');
  }
  return job;
}
