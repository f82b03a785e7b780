/**
 * A fake SendGrid v3 Mail Send API on 127.0.0.1, for tests of the SendGrid transport and of the email pipeline
 * (point SENDGRID_BASE_URL, or sendgridTransport's `baseUrl`, at `fake.url`). Nothing leaves the machine.
 *
 *   const fake = await startFakeSendgrid([429, 202]);   // first request 429, second 202, then 202 for every other
 *   ... send ...
 *   fake.requests[0].body.personalizations               // what the transport sent, parsed
 *   await fake.close();
 *
 * It records every request (headers, the Bearer key, the parsed JSON body) and answers from a script: a list of
 * answers used in order (202 once it runs out), or a function of the request. An answer is a status (a 2xx gets an
 * empty body and an `X-Message-Id`; any other status SendGrid's error JSON `{"errors":[{"message","field","help"}]}`),
 * an object naming the status and the error messages, `'hang'` (no answer until the client gives up) or `'drop'`
 * (the connection is closed without an answer).
 *
 * It imports nothing of the service (whose config needs TABLE_NAME), so a global setup may start it too.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeSendgridAnswer =
  number | { status: number; errors?: readonly string[]; messageId?: string } | 'hang' | 'drop';

export interface SendgridRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The key of `Authorization: Bearer <key>`, if the request had one. */
  apiKey?: string;
  /** The JSON body, parsed; undefined when it was not JSON. */
  body: MailSendBody | undefined;
}

/** The parts of a Mail Send body the transport writes (the fake does not check the shape: tests do). */
export interface MailSendBody {
  personalizations: Array<{ to: Array<{ email: string; name?: string }> }>;
  from: { email: string; name?: string };
  subject: string;
  content: Array<{ type: string; value: string }>;
  custom_args?: Record<string, string>;
  headers?: Record<string, string>;
}

export type FakeSendgridScript =
  readonly FakeSendgridAnswer[] | ((request: SendgridRequest, index: number) => FakeSendgridAnswer);

export interface FakeSendgrid {
  /** The base URL (no path): what SENDGRID_BASE_URL would be. */
  url: string;
  /** Every request received, oldest first. */
  requests: SendgridRequest[];
  /** Replaces the script; a list starts again from its first answer. */
  answer(script: FakeSendgridScript): void;
  close(): Promise<void>;
}

/** A 2xx's `X-Message-Id`, unless the answer names one: `fake-<n>` for the n-th request (from 1). */
const messageIdOf = (index: number) => `fake-${index + 1}`;

function bearer(headers: http.IncomingHttpHeaders): string | undefined {
  const match = /^Bearer (.+)$/.exec(headers.authorization ?? '');
  return match?.[1];
}

function parse(text: string): MailSendBody | undefined {
  try {
    return JSON.parse(text) as MailSendBody;
  } catch {
    return undefined;
  }
}

function respond(
  response: http.ServerResponse,
  answer: Exclude<FakeSendgridAnswer, 'hang' | 'drop'>,
  index: number,
): void {
  const { status, errors, messageId } =
    typeof answer === 'number' ? { status: answer, errors: undefined, messageId: undefined } : answer;
  if (status >= 200 && status < 300) {
    response.writeHead(status, { 'x-message-id': messageId ?? messageIdOf(index) }).end();
    return;
  }
  const messages = errors ?? [`Fake SendGrid error ${status}.`];
  const body = JSON.stringify({ errors: messages.map((message) => ({ message, field: null, help: null })) });
  response.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

export async function startFakeSendgrid(initial: FakeSendgridScript = []): Promise<FakeSendgrid> {
  let script = initial;
  let scriptStart = 0;
  const requests: SendgridRequest[] = [];
  const hanging = new Set<http.ServerResponse>();

  const server = http.createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const apiKey = bearer(incoming.headers);
      const request: SendgridRequest = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        ...(apiKey === undefined ? {} : { apiKey }),
        body: parse(text),
      };
      const index = requests.length;
      requests.push(request);
      if (request.method !== 'POST' || request.path !== '/v3/mail/send') {
        respond(
          response,
          { status: 404, errors: [`The fake serves POST /v3/mail/send, not ${request.method} ${request.path}.`] },
          index,
        );
        return;
      }
      const answer = typeof script === 'function' ? script(request, index) : (script[index - scriptStart] ?? 202);
      if (answer === 'hang') {
        hanging.add(response);
        response.once('close', () => hanging.delete(response));
      } else if (answer === 'drop') {
        incoming.socket.destroy();
      } else {
        respond(response, answer, index);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer(next) {
      script = next;
      scriptStart = requests.length;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
