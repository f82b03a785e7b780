/**
 * The one outbound HTTP client for requests to addresses a customer chose (webhook attempts, later email APIs):
 * docs/design.md "Work after the response", docs/decisions.md §11 "Delivery" and "Destinations".
 *
 * - One POST, never retried here (the retry schedule is the caller's; the one exception is a kept-alive connection
 *   the receiver closed before the request reached it) and never redirected: a 3xx comes back as it is, and only a
 *   2xx is a success to the caller.
 * - One deadline for the whole exchange, from resolving the host to the last byte read: `Timed out after 15 s.`
 * - At most the first 1 KB of the response body is read; then the connection is dropped, so a receiver that
 *   streams forever costs nothing more.
 * - The destination check is made on the address actually connected to, after DNS resolution, by
 *   `request-filtering-agent`: its agent wraps the `lookup` the socket connects with, so the addresses that are
 *   checked are the addresses used (no second resolution, hence no DNS-rebinding gap), and a URL naming an IP
 *   literal is checked before connecting. Every address that is not ordinary unicast per `ipaddr.js` is refused:
 *   loopback, private (RFC 1918), unique local (RFC 4193), link-local (169.254.0.0/16, fe80::/10), carrier-grade
 *   NAT, multicast, broadcast, unspecified, the reserved and documentation ranges, and every IPv4-mapped IPv6
 *   address (`::ffff:127.0.0.1` as much as `::ffff:8.8.8.8`: no resolver hands those out for a public host). A
 *   host with several addresses is refused when any of them is. `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_URLS) lifts
 *   the check.
 * - Never throws for network problems: the result says what happened. Errors never quote the request's headers
 *   (they carry signatures) or body.
 * - Response headers come back only when the caller names them (`responseHeaders`: an email API's message id).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';

export const DESTINATION_NOT_ALLOWED = 'Destination address not allowed.';

/** How much of a response body is read and kept (docs/decisions.md §11: attempts keep the first 1 KB). */
export const RESPONSE_BODY_MAX_BYTES = 1024;

export interface OutboundResult {
  /** The response's status; 0 when no response came (refused destination, no connection, timeout before headers). */
  statusCode: number;
  /** The first RESPONSE_BODY_MAX_BYTES bytes of the body as UTF-8 (a character cut at the end is left out). */
  responseBody: string;
  /** From the call to the result, whole milliseconds. */
  durationMs: number;
  /**
   * Why the exchange did not complete; when present the attempt failed whatever `statusCode` says (a timeout or a
   * dropped connection after the headers keeps the status that arrived).
   */
  error?: string;
  /** The response headers named in `PostJsonOptions.responseHeaders` that arrived (names in lower case); only when asked for. */
  headers?: Record<string, string>;
}

export interface PostJsonOptions {
  /** Deadline of the whole exchange, ms. */
  timeoutMs: number;
  /** Lets loopback, private, link-local and other non-public destinations through (the local stack's default). */
  allowPrivate: boolean;
  /**
   * Replaces DNS resolution (tests); the destination check applies to what it returns. It must call back
   * asynchronously, as `dns.lookup` does (node's http client attaches its socket error handler on the next tick).
   */
  lookup?: LookupFunction;
  /** Response headers the caller needs (an email API's message id), by name: returned in `headers`, none other. */
  responseHeaders?: readonly string[];
}

// Connections are kept alive between attempts to the same host (a TLS handshake per delivery is the largest cost of
// a busy endpoint, for us and for the receiver): a socket goes back to the pool only after a response read to its
// end; one that timed out, was cut at 1 KB or failed is destroyed. A kept socket was checked when it connected and
// stays connected to that address. Node drops an idle socket before the server's Keep-Alive timeout hint, and a
// request that still meets a socket closed under it is sent once more on a new connection (see `postJson`).
const AGENT_OPTIONS = { keepAlive: true, maxSockets: 50, maxFreeSockets: 10, scheduling: 'lifo' as const };
const FILTERED = {
  'http:': new RequestFilteringHttpAgent(AGENT_OPTIONS),
  'https:': new RequestFilteringHttpsAgent(AGENT_OPTIONS),
};
const UNFILTERED = { 'http:': new http.Agent(AGENT_OPTIONS), 'https:': new https.Agent(AGENT_OPTIONS) };

/**
 * The messages request-filtering-agent (3.x) gives a refused address: "DNS lookup <address>(family:…, host:…) is
 * not allowed. Because, …". A unit test pins each form, so an upgrade that changes them fails there.
 */
const REFUSED_BY_FILTER = /^DNS lookup \S*\(family:[^)]*\) is not allowed\./;

const ERROR_TEXT_MAX = 300;

function seconds(ms: number): string {
  return String(Number((ms / 1000).toFixed(3)));
}

/** Duck-typed: node's own errors may come from another realm (jest's sandbox), where `instanceof Error` is false. */
function errorParts(error: unknown): { message: string; code?: string } {
  if (typeof error !== 'object' || error === null) return { message: String(error) };
  const { message, code } = error as { message?: unknown; code?: unknown };
  return { message: typeof message === 'string' ? message : '', ...(typeof code === 'string' ? { code } : {}) };
}

function describe(error: unknown): string {
  const { message, code } = errorParts(error);
  if (REFUSED_BY_FILTER.test(message)) return DESTINATION_NOT_ALLOWED;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Could not resolve the host (${code}).`;
    case 'ECONNREFUSED':
      return 'Connection refused (ECONNREFUSED).';
    case 'ECONNRESET':
    case 'EPIPE':
      return `Connection closed by the destination (${code}).`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `Destination unreachable (${code}).`;
    default: {
      if (message === '') return code === undefined ? 'Request failed.' : `Request failed (${code}).`;
      const trimmed = message.trim();
      const text = trimmed.length > ERROR_TEXT_MAX ? `${trimmed.slice(0, ERROR_TEXT_MAX)}…` : trimmed;
      return code === undefined || text.includes(code)
        ? `Request failed: ${text}`
        : `Request failed (${code}): ${text}`;
    }
  }
}

/** The headers of `names` that `headers` has, each as one string (a repeated header's values joined by ", "). */
function pickHeaders(headers: http.IncomingHttpHeaders, names: readonly string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = headers[name.toLowerCase()];
    if (value !== undefined) picked[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return picked;
}

/** `bytes` as UTF-8, leaving out a multi-byte character cut off at the end instead of turning it into U+FFFD. */
function utf8Prefix(bytes: Buffer): string {
  return new TextDecoder('utf-8').decode(bytes, { stream: true });
}

/**
 * POSTs `body` to `url` with `headers` (content-length is set here) and reports the outcome; see the module
 * comment for the rules. Resolves, never rejects.
 */
export function postJson(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: PostJsonOptions,
): Promise<OutboundResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string): Promise<OutboundResult> =>
    Promise.resolve({ statusCode: 0, responseBody: '', durationMs: elapsed(), error });

  if (!URL.canParse(url)) return failed('Invalid URL.');
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    return failed('Only http and https URLs can be called.');
  const agent = (options.allowPrivate ? UNFILTERED : FILTERED)[target.protocol];

  return new Promise((resolve) => {
    let statusCode = 0;
    let kept: Record<string, string> | undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    let request: http.ClientRequest | undefined;

    /** `keep`: the response was read to its end, so its socket may serve the next request to this host. */
    const finish = (error?: string, keep = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keep) request?.destroy();
      const responseBody = utf8Prefix(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_MAX_BYTES));
      resolve({
        statusCode,
        responseBody,
        durationMs: elapsed(),
        ...(error === undefined ? {} : { error }),
        ...(kept === undefined ? {} : { headers: kept }),
      });
    };

    const timer = setTimeout(() => finish(`Timed out after ${seconds(options.timeoutMs)} s.`), options.timeoutMs);

    const send = (retry: boolean) => {
      try {
        const sent = (target.protocol === 'https:' ? https : http).request(
          target,
          {
            method: 'POST',
            headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
            agent,
            ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
          },
          (response) => {
            statusCode = response.statusCode ?? 0;
            if (options.responseHeaders !== undefined) kept = pickHeaders(response.headers, options.responseHeaders);
            response.on('data', (chunk: Buffer) => {
              chunks.push(chunk);
              received += chunk.length;
              if (received >= RESPONSE_BODY_MAX_BYTES) finish();
            });
            response.on('end', () => finish(undefined, true));
            response.on('error', (error) => finish(describe(error)));
            response.on('close', () => finish('Connection closed before the response ended.'));
          },
        );
        request = sent;
        sent.on('error', (error) => {
          // A kept-alive socket the receiver closed while idle: nothing reached it, so send once on a new connection.
          if (retry && sent.reusedSocket && statusCode === 0 && !settled && errorParts(error).code === 'ECONNRESET') {
            send(false);
            return;
          }
          finish(describe(error));
        });
        sent.end(body);
      } catch (error) {
        // A header value node refuses (a newline in it), and the like: reported, never thrown.
        finish(describe(error));
      }
    };
    send(true);
  });
}
