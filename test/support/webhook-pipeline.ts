/**
 * The event pipeline of the local stack, run inside a connected test file against its own table: the stream
 * poller feeding the stream workers, and the queue poller feeding the delivery worker from a file queue in a
 * temporary folder, each under its worker's grants. And a webhook receiver on 127.0.0.1 whose answers a test
 * scripts.
 *
 * test/support/table-per-file.ts sets WEBHOOK_* and DELIVERY_QUEUE_DIR before the handlers load.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { startQueuePoller } from '../../bin/lib/queue-poller';
import { runAsWorker } from '../../bin/lib/grant-check';
import { startStreamPoller } from '../../bin/lib/stream-poller';
import { handler as deliveryHandler } from '../../functions/workers/webhook-delivery';
import { handler as eventsHandler } from '../../functions/workers/webhook-events';
import { handler as migrationHandler } from '../../functions/workers/document-migration';
import { documentMigrationWorker, webhookDeliveryWorker, webhookEventsWorker } from '../../shared/workers';

export interface Pipeline {
  stop(): Promise<void>;
}

/** `migrations: false` leaves migrations pending (the events worker still sees them start). */
export async function startPipeline(options: { migrations?: boolean } = {}): Promise<Pipeline> {
  const migrations = options.migrations ?? true;
  const stream = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT as string,
    tableName: process.env.TABLE_NAME as string,
    idleMs: 50,
    workers: [
      ...(migrations ? [{ worker: documentMigrationWorker, handler: (event: DynamoDBStreamEvent, context: Context) => runAsWorker(documentMigrationWorker, () => migrationHandler(event, context)) }] : []),
      { worker: webhookEventsWorker, handler: (event: DynamoDBStreamEvent) => runAsWorker(webhookEventsWorker, () => eventsHandler(event)) },
    ],
  });
  const queue = await startQueuePoller({
    dir: process.env.DELIVERY_QUEUE_DIR as string,
    handler: (event) => runAsWorker(webhookDeliveryWorker, () => deliveryHandler(event)),
    idleMs: 25,
  });
  return {
    async stop() {
      await stream.stop();
      await queue.stop();
    },
  };
}

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** ms */
  at: number;
}

/** What the receiver does with its n-th request (from 0): answer with a status, or never answer. */
export type Script = (n: number, request: ReceivedRequest) => number | 'hang';

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests (of type `type`, when given) have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, options?: { type?: string; timeoutMs?: number }): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export const typeOf = (request: ReceivedRequest): string => (JSON.parse(request.body) as { type: string }).type;

export async function startReceiver(script: Script = () => 200, path = '/hook'): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const answer = script(requests.length, request);
      requests.push(request);
      if (answer === 'hang') {
        hanging.add(() => res.destroy());
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(`answered ${answer}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    async waitFor(count, options = {}) {
      const deadline = Date.now() + (options.timeoutMs ?? 20_000);
      const matching = () => requests.filter((request) => options.type === undefined || typeOf(request) === options.type);
      while (matching().length < count) {
        if (Date.now() > deadline) throw new Error(`Receiver got ${matching().length} of ${count} requests${options.type ? ` of type ${options.type}` : ''}.`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return matching();
    },
    async close() {
      for (const release of hanging) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
