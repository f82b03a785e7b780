/** A webhook receiver on 127.0.0.1 whose answers a test scripts; it records every request it gets. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** ms */
  at: number;
}

/** What the receiver does with its n-th request (from 0): answer with a status (now, or once a promise settles), or never answer. */
export type Script = (n: number, request: ReceivedRequest) => number | Promise<number> | 'hang';

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests (of type `type`, when given) have arrived; rejects at the wait ceiling (./wait.ts). */
  waitFor(count: number, options?: { type?: string }): Promise<ReceivedRequest[]>;
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
      void Promise.resolve(answer).then((status) =>
        res.writeHead(status, { 'content-type': 'text/plain' }).end(`answered ${status}`),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    async waitFor(count, options = {}) {
      const matching = () =>
        requests.filter((request) => options.type === undefined || typeOf(request) === options.type);
      await waitFor(() => matching().length >= count, {
        intervalMs: 20,
        what: `${count} requests${options.type ? ` of type ${options.type}` : ''} (received ${matching().length})`,
      });
      return matching();
    },
    async close() {
      for (const release of hanging) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
