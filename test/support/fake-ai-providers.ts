/**
 * A local stand-in for the three AI providers, speaking each one's wire format as its official SDK calls it:
 *
 *   OpenAI     POST <url>/v1/chat/completions               (OPENAI_BASE_URL = <url>/v1; the SDK appends /chat/completions)
 *   Anthropic  POST <url>/v1/messages                       (ANTHROPIC_BASE_URL = <url>)
 *   Gemini     POST <url>/v1beta/models/<model>:generateContent   (GEMINI_BASE_URL = <url>)
 *
 * It records every request under the provider key it carried (`authorization: Bearer`, `x-api-key` or
 * `x-goog-api-key`), and answers each key as scripted: a reply, an HTTP error in the provider's error format, no
 * answer at all (a hang), or a dropped connection. Unscripted keys get `fake <provider> answer for <model>`. Tests use a fresh key each,
 * so test files sharing one server never see each other's requests.
 *
 * The server is started by the connected and e2e global setups (other processes than the test workers), so tests
 * reach it over a small control API under `/__fake/` through `fakeAiProviders()`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeProvider = 'openai' | 'anthropic' | 'gemini';

export type FakeBehaviour =
  | { reply: string }
  /** An HTTP error; `message` goes into the provider's error body. */
  | { status: number; message?: string }
  /** Accepts the request and never answers (until the client gives up or the server stops). */
  | { hang: true }
  /** Closes the connection without an answer, as a crashed or unreachable server would. */
  | { drop: true };

export interface RecordedRequest {
  provider: FakeProvider;
  path: string;
  /** The provider key the request carried, from whichever header its SDK uses. */
  credential?: string;
  headers: Record<string, string>;
  body: unknown;
}

/** The environment that points the service's SDKs at a fake listening on `url`. */
export function fakeBaseUrlEnvironment(url: string): Record<string, string> {
  return { OPENAI_BASE_URL: `${url}/v1`, ANTHROPIC_BASE_URL: url, GEMINI_BASE_URL: url };
}

/** Recorded requests kept, oldest dropped first: a long run must not grow without bound. */
const MAX_RECORDED = 2000;
/** A hang ends by itself after this, so that a forgotten client cannot hold the server open. */
const MAX_HANG_MS = 120_000;

const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):generateContent$/;

export class FakeAiProviders {
  private readonly behaviours = new Map<string, FakeBehaviour>();
  private readonly recorded: RecordedRequest[] = [];
  private readonly hanging = new Set<ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FakeAiProviders> {
    let fake: FakeAiProviders | undefined;
    const server = createServer((request, response) => {
      fake?.handle(request, response).catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
    fake = new FakeAiProviders(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return fake;
  }

  /** How requests carrying `key` are answered from now on. */
  script(key: string, behaviour: FakeBehaviour): void {
    this.behaviours.set(key, behaviour);
  }

  /** The requests that carried `key`, oldest first. */
  requests(key: string): RecordedRequest[] {
    return this.recorded.filter((request) => request.credential === key);
  }

  async stop(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    await new Promise<void>((resolveClose) => {
      this.server.close(() => resolveClose());
      this.server.closeAllConnections();
    });
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readJson(request);
    const path = new URL(request.url ?? '/', this.url).pathname;
    if (path.startsWith('/__fake/')) {
      this.control(path, body, response);
      return;
    }
    const provider = providerOf(path);
    if (request.method !== 'POST' || provider === undefined) {
      sendJson(response, 404, { error: { message: `The fake providers do not serve ${request.method} ${path}.` } });
      return;
    }
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
    const credential = credentialOf(headers);
    this.recorded.push({ provider, path, credential, headers, body });
    if (this.recorded.length > MAX_RECORDED) this.recorded.shift();

    const behaviour = (credential === undefined ? undefined : this.behaviours.get(credential)) ?? {
      reply: defaultReply(provider, path, body),
    };
    if ('hang' in behaviour) {
      this.hanging.add(response);
      const timer = setTimeout(() => response.destroy(), MAX_HANG_MS);
      response.once('close', () => {
        clearTimeout(timer);
        this.hanging.delete(response);
      });
      return;
    }
    if ('drop' in behaviour) {
      request.socket.destroy();
      return;
    }
    if ('status' in behaviour) {
      sendJson(
        response,
        behaviour.status,
        errorBody(provider, behaviour.status, behaviour.message ?? `Fake error ${behaviour.status}.`),
      );
      return;
    }
    sendJson(response, 200, successBody(provider, modelOf(path, body), behaviour.reply));
  }

  private control(path: string, body: unknown, response: ServerResponse): void {
    const { key, behaviour } = (body ?? {}) as { key?: string; behaviour?: FakeBehaviour };
    if (typeof key !== 'string') {
      sendJson(response, 400, { error: 'key is required' });
    } else if (path === '/__fake/script' && behaviour !== undefined) {
      this.script(key, behaviour);
      sendJson(response, 200, { ok: true });
    } else if (path === '/__fake/requests') {
      sendJson(response, 200, { requests: this.requests(key) });
    } else {
      sendJson(response, 404, { error: `unknown control path ${path}` });
    }
  }
}

export interface FakeAiProvidersClient {
  url: string;
  script(key: string, behaviour: FakeBehaviour): Promise<void>;
  requests(key: string): Promise<RecordedRequest[]>;
}

/**
 * The fake started by the tier's global setup, seen from a test worker. Each tier names its own variable
 * (connected FAKE_AI_PROVIDERS_URL, e2e E2E_FAKE_AI_PROVIDERS_URL): `npm test` runs every tier's setup in one
 * process, so a shared name would point one tier's tests at the other tier's fake.
 */
export function fakeAiProviders(variable = 'FAKE_AI_PROVIDERS_URL'): FakeAiProvidersClient {
  const url = process.env[variable];
  if (url === undefined)
    throw new Error(`${variable} is not set: the global setup did not start the fake AI providers.`);
  const control = async (path: string, body: unknown): Promise<unknown> => {
    const response = await fetch(`${url}/__fake/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`Fake AI providers: ${path} answered ${response.status}.`);
    return response.json();
  };
  return {
    url,
    script: async (key, behaviour) => {
      await control('script', { key, behaviour });
    },
    requests: async (key) => ((await control('requests', { key })) as { requests: RecordedRequest[] }).requests,
  };
}

function providerOf(path: string): FakeProvider | undefined {
  if (path === '/v1/chat/completions') return 'openai';
  if (path === '/v1/messages') return 'anthropic';
  if (GEMINI_PATH.test(path)) return 'gemini';
  return undefined;
}

function credentialOf(headers: Record<string, string>): string | undefined {
  const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '');
  return headers['x-goog-api-key'] ?? headers['x-api-key'] ?? bearer?.[1];
}

function modelOf(path: string, body: unknown): string {
  const gemini = GEMINI_PATH.exec(path);
  if (gemini !== null) return decodeURIComponent(gemini[1]);
  const model = (body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' ? model : 'unknown';
}

function defaultReply(provider: FakeProvider, path: string, body: unknown): string {
  return `fake ${provider} answer for ${modelOf(path, body)}`;
}

function successBody(provider: FakeProvider, model: string, text: string): unknown {
  const usage = { input: 10, output: Math.max(1, Math.ceil(text.length / 4)) };
  switch (provider) {
    case 'openai':
      return {
        id: 'chatcmpl-fake',
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: text, refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        },
      };
    case 'anthropic':
      return {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      };
    case 'gemini':
      return {
        candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: {
          promptTokenCount: usage.input,
          candidatesTokenCount: usage.output,
          totalTokenCount: usage.input + usage.output,
        },
        modelVersion: model,
      };
  }
}

const GEMINI_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function errorBody(provider: FakeProvider, status: number, message: string): unknown {
  switch (provider) {
    case 'openai':
      return {
        error: {
          message,
          type: status === 429 ? 'rate_limit_error' : 'invalid_request_error',
          param: null,
          code: null,
        },
      };
    case 'anthropic':
      return { type: 'error', error: { type: status === 401 ? 'authentication_error' : 'api_error', message } };
    case 'gemini':
      return { error: { code: status, message, status: GEMINI_STATUS[status] ?? 'UNKNOWN' } };
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  response.end(text);
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('error', reject);
    request.once('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolveBody(text === '' ? undefined : JSON.parse(text));
      } catch {
        resolveBody(text);
      }
    });
  });
}
