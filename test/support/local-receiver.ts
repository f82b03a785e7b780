/**
 * A webhook receiver on 127.0.0.1 for unit tests of outbound HTTP: records every request it gets (headers and the
 * exact body) and answers as the test says. Nothing leaves the machine.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Answer = (request: ReceivedRequest, response: http.ServerResponse) => void;

export interface LocalReceiver {
  port: number;
  url: string;
  received: ReceivedRequest[];
  /** TCP connections accepted so far (a kept-alive connection serves several requests). */
  connections: number;
  /** How the next requests are answered (default: 204). */
  answer: Answer;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<LocalReceiver> {
  const receiver: Omit<LocalReceiver, 'port' | 'url'> = {
    received: [],
    connections: 0,
    answer: (_request, response) => response.writeHead(204).end(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      receiver.received.push(request);
      receiver.answer(request, response);
    });
  });
  server.on('connection', () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, { port, url: `http://127.0.0.1:${port}` });
}
