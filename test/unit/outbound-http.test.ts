/**
 * The outbound HTTP client (shared/adapters/http/outbound-http.ts) against receivers on 127.0.0.1: the destination check
 * on the address actually connected to, the whole-exchange deadline, no redirects, the 1 KB body cap.
 */
import dc from 'node:diagnostics_channel';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { DESTINATION_NOT_ALLOWED, postJson, RESPONSE_BODY_MAX_BYTES } from '../../shared/adapters/http/outbound-http';
import { startReceiver, type LocalReceiver } from '../support/local-receiver';

const HEADERS = { 'content-type': 'application/json', 'webhook-signature': 'v1,c2VjcmV0LXNpZ25hdHVyZQ==' };
const BODY = '{"type":"comment.add"}';
const refused = { timeoutMs: 2000, allowPrivate: false };
const allowed = { timeoutMs: 2000, allowPrivate: true };

/** A stand-in for DNS that answers `address` for any host, asynchronously as dns.lookup does, and records the hosts. */
function resolvingTo(address: string): LookupFunction & { hosts: string[] } {
  const hosts: string[] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    hosts.push(hostname);
    const family = isIP(address);
    setImmediate(() => (options.all ? callback(null, [{ address, family }]) : callback(null, address, family)));
  };
  return Object.assign(lookup, { hosts });
}

let receiver: LocalReceiver;

beforeEach(async () => {
  receiver = await startReceiver();
});

afterEach(async () => {
  await receiver.close();
});

describe('postJson destination check', () => {
  it('refuses a loopback IP literal without the receiver seeing a request', async () => {
    const result = await postJson(`${receiver.url}/hook`, HEADERS, BODY, refused);

    expect(result).toEqual({
      statusCode: 0,
      responseBody: '',
      durationMs: expect.any(Number),
      error: DESTINATION_NOT_ALLOWED,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received).toEqual([]);
  });

  it('refuses a hostname that resolves to loopback, checking the resolved address, and the receiver sees nothing', async () => {
    const lookup = resolvingTo('127.0.0.1');

    const result = await postJson(`http://hooks.example.com:${receiver.port}/hook`, HEADERS, BODY, {
      ...refused,
      lookup,
    });

    expect(lookup.hosts).toEqual(['hooks.example.com']);
    expect(result.error).toBe(DESTINATION_NOT_ALLOWED);
    expect(result.statusCode).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received).toEqual([]);
  });

  it.each([
    ['IPv6 loopback', `http://[::1]:9/`],
    ['RFC 1918', 'http://10.0.0.1/'],
    ['RFC 1918 (172.16/12)', 'http://172.31.255.1/'],
    ['RFC 1918 (192.168/16)', 'http://192.168.1.1/'],
    ['link-local metadata service', 'http://169.254.169.254/latest/meta-data/'],
    ['carrier-grade NAT', 'http://100.64.0.1/'],
    ['unspecified', 'http://0.0.0.0/'],
    ['multicast', 'http://224.0.0.1/'],
    ['IPv6 unique local (RFC 4193)', 'http://[fd00::1]/'],
    ['IPv6 link-local', 'http://[fe80::1]/'],
    ['IPv6 unspecified', 'http://[::]/'],
    ['IPv6 multicast', 'http://[ff02::1]/'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/'],
    ['IPv4-mapped metadata service', 'http://[::ffff:169.254.169.254]/'],
    ['IPv4-mapped RFC 1918', 'http://[::ffff:10.0.0.1]/'],
    ['decimal loopback (the URL parser makes it 127.0.0.1)', 'http://2130706433/'],
  ])('refuses a %s literal', async (_name, url) => {
    expect(await postJson(url, HEADERS, BODY, refused)).toMatchObject({
      statusCode: 0,
      error: DESTINATION_NOT_ALLOWED,
    });
  });

  it.each(['169.254.169.254', '10.0.0.1', '::1', '::ffff:127.0.0.1', 'fd12:3456::1', '100.100.100.100'])(
    'refuses a hostname whose lookup answers %s',
    async (address) => {
      const lookup = resolvingTo(address);

      const result = await postJson('https://hooks.example.com/hook', HEADERS, BODY, { ...refused, lookup });

      expect(lookup.hosts).toEqual(['hooks.example.com']);
      expect(result).toMatchObject({ statusCode: 0, error: DESTINATION_NOT_ALLOWED });
    },
  );

  it('refuses a host when any of its addresses is forbidden (one public, one private)', async () => {
    const lookup: LookupFunction = (_hostname, options, callback) =>
      setImmediate(() =>
        options.all
          ? callback(null, [
              { address: '8.8.8.8', family: 4 },
              { address: '10.0.0.1', family: 4 },
            ])
          : callback(null, '10.0.0.1', 4),
      );

    expect(await postJson('http://hooks.example.com/', HEADERS, BODY, { ...refused, lookup })).toMatchObject({
      error: DESTINATION_NOT_ALLOWED,
    });
  });

  it('lets a public address through the check (stopped by the test before any connection is attempted)', async () => {
    // No network here: the test watches the socket, sees the checked lookup result, and destroys it before connecting.
    const seen: Array<{ error: string | null; address: string | undefined }> = [];
    let attempts = 0;
    const onSocket = (message: unknown) => {
      const { socket } = message as { socket: Socket };
      socket.on('connectionAttempt', () => (attempts += 1));
      socket.once('lookup', (error: Error | null, address: string | undefined) => {
        seen.push({ error: error?.message ?? null, address });
        socket.destroy(new Error('stopped by the test'));
      });
    };
    dc.subscribe('net.client.socket', onSocket);
    try {
      for (const address of ['8.8.8.8', '2606:4700:4700::1111']) {
        const result = await postJson('http://hooks.example.com:9/', HEADERS, BODY, {
          ...refused,
          lookup: resolvingTo(address),
        });
        expect(result.error).not.toBe(DESTINATION_NOT_ALLOWED);
        expect(result.error).toContain('stopped by the test');
      }
    } finally {
      dc.unsubscribe('net.client.socket', onSocket);
    }

    expect(seen).toEqual([
      { error: null, address: '8.8.8.8' },
      { error: null, address: '2606:4700:4700::1111' },
    ]);
    expect(attempts).toBe(0);
  });

  it('reaches the loopback receiver when private destinations are allowed', async () => {
    const result = await postJson(`${receiver.url}/hook?x=1`, HEADERS, BODY, allowed);

    expect(result).toEqual({ statusCode: 204, responseBody: '', durationMs: expect.any(Number) });
    expect(receiver.received).toEqual([
      {
        method: 'POST',
        path: '/hook?x=1',
        headers: expect.objectContaining({ ...HEADERS, 'content-length': String(Buffer.byteLength(BODY)) }),
        body: BODY,
      },
    ]);
  });

  it('reaches a hostname resolving to loopback when private destinations are allowed', async () => {
    const result = await postJson(`http://hooks.example.com:${receiver.port}/`, HEADERS, BODY, {
      ...allowed,
      lookup: resolvingTo('127.0.0.1'),
    });

    expect(result.statusCode).toBe(204);
    expect(receiver.received[0].headers.host).toBe(`hooks.example.com:${receiver.port}`);
  });
});

describe('postJson exchange', () => {
  it('gives up on a receiver that never answers once timeoutMs has passed', async () => {
    receiver.answer = () => undefined;

    const result = await postJson(receiver.url, HEADERS, BODY, { timeoutMs: 300, allowPrivate: true });

    expect(result).toEqual({
      statusCode: 0,
      responseBody: '',
      durationMs: expect.any(Number),
      error: 'Timed out after 0.3 s.',
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(295);
    expect(result.durationMs).toBeLessThan(300 + 200);
    expect(receiver.received).toHaveLength(1);
  });

  it('bounds the whole exchange: a body that trickles past the deadline times out, keeping the status that came', async () => {
    receiver.answer = (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('partial');
    };

    const result = await postJson(receiver.url, HEADERS, BODY, { timeoutMs: 300, allowPrivate: true });

    expect(result).toMatchObject({ statusCode: 200, responseBody: 'partial', error: 'Timed out after 0.3 s.' });
    expect(result.durationMs).toBeLessThan(500);
  });

  it('formats the production deadline in whole seconds', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'performance'] });
    try {
      receiver.answer = () => undefined;
      const pending = postJson(receiver.url, HEADERS, BODY, { timeoutMs: 15_000, allowPrivate: true });
      await new Promise((resolve) => setImmediate(resolve));
      jest.advanceTimersByTime(15_000);
      expect((await pending).error).toBe('Timed out after 15 s.');
    } finally {
      jest.useRealTimers();
    }
  });

  it('returns a 302 as it is, without following it', async () => {
    receiver.answer = (request, response) => {
      if (request.path === '/moved')
        response.writeHead(302, { location: `${receiver.url}/elsewhere` }).end('see elsewhere');
      else response.writeHead(200).end('followed');
    };

    const result = await postJson(`${receiver.url}/moved`, HEADERS, BODY, allowed);

    expect(result).toEqual({ statusCode: 302, responseBody: 'see elsewhere', durationMs: expect.any(Number) });
    expect(receiver.received.map((request) => request.path)).toEqual(['/moved']);
  });

  it('returns the response headers the caller names, and no other', async () => {
    receiver.answer = (_request, response) =>
      response.writeHead(202, { 'X-Message-Id': 'msg-1', 'set-cookie': 'session=1' }).end();

    const result = await postJson(receiver.url, HEADERS, BODY, {
      ...allowed,
      responseHeaders: ['X-Message-Id', 'x-absent'],
    });

    expect(result).toEqual({
      statusCode: 202,
      responseBody: '',
      durationMs: expect.any(Number),
      headers: { 'x-message-id': 'msg-1' },
    });
  });

  it('keeps the first 1024 bytes of a 5 KB error body', async () => {
    const body = 'e'.repeat(5 * 1024);
    receiver.answer = (_request, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end(body);

    const result = await postJson(receiver.url, HEADERS, BODY, allowed);

    expect(result.statusCode).toBe(500);
    expect(result.error).toBeUndefined();
    expect(Buffer.byteLength(result.responseBody)).toBe(RESPONSE_BODY_MAX_BYTES);
    expect(result.responseBody).toBe(body.slice(0, 1024));
  });

  it('stops reading after 1 KB of an endless body and does not wait for its end', async () => {
    receiver.answer = (_request, response) => {
      response.writeHead(200);
      const timer = setInterval(() => response.write('x'.repeat(512)), 5);
      response.on('close', () => clearInterval(timer));
    };

    const result = await postJson(receiver.url, HEADERS, BODY, { timeoutMs: 2000, allowPrivate: true });

    expect(result.error).toBeUndefined();
    expect(result.statusCode).toBe(200);
    expect(result.responseBody).toBe('x'.repeat(1024));
    expect(result.durationMs).toBeLessThan(1000);
  });

  it('leaves out a multi-byte character cut by the 1 KB limit instead of garbling it', async () => {
    // 1023 ASCII bytes, then "é" (2 bytes): the limit falls inside it.
    receiver.answer = (_request, response) => response.writeHead(400).end(`${'a'.repeat(1023)}é and more`);

    const result = await postJson(receiver.url, HEADERS, BODY, allowed);

    expect(result.responseBody).toBe('a'.repeat(1023));
    expect(result.responseBody).not.toContain('\uFFFD');
  });

  it('measures the duration of the exchange', async () => {
    receiver.answer = (_request, response) => setTimeout(() => response.writeHead(200).end('ok'), 120);

    const result = await postJson(receiver.url, HEADERS, BODY, allowed);

    expect(result).toMatchObject({ statusCode: 200, responseBody: 'ok' });
    expect(result.durationMs).toBeGreaterThanOrEqual(115);
    expect(result.durationMs).toBeLessThan(1000);
  });

  it('reports a refused connection without throwing', async () => {
    const port = receiver.port;
    await receiver.close();
    receiver = await startReceiver();

    const result = await postJson(`http://127.0.0.1:${port}/`, HEADERS, BODY, allowed);

    expect(result).toMatchObject({ statusCode: 0, responseBody: '', error: 'Connection refused (ECONNREFUSED).' });
  });

  it('reports a connection dropped before the response, and never quotes the request headers', async () => {
    receiver.answer = (_request, response) => response.socket?.destroy();

    const result = await postJson(receiver.url, HEADERS, BODY, allowed);

    expect(result.statusCode).toBe(0);
    expect(result.error).toEqual(expect.any(String));
    expect(result.error).not.toContain('c2VjcmV0');
  });

  it.each([
    ['not a URL', 'not a url', 'Invalid URL.'],
    ['another scheme', 'ftp://example.com/hook', 'Only http and https URLs can be called.'],
  ])('reports %s without throwing', async (_name, url, error) => {
    expect(await postJson(url, HEADERS, BODY, allowed)).toEqual({
      statusCode: 0,
      responseBody: '',
      durationMs: expect.any(Number),
      error,
    });
  });

  it('reports a header value node refuses without throwing or quoting it', async () => {
    const result = await postJson(receiver.url, { 'webhook-signature': 'v1,abc\r\nx-injected: 1' }, BODY, allowed);

    expect(result.statusCode).toBe(0);
    expect(result.error).not.toContain('abc');
    expect(receiver.received).toEqual([]);
  });
});

describe('postJson connections', () => {
  it('keeps the connection for the next request to the same host once a response was read to its end', async () => {
    expect(await postJson(receiver.url, HEADERS, BODY, allowed)).toMatchObject({ statusCode: 204 });
    expect(await postJson(receiver.url, HEADERS, BODY, allowed)).toMatchObject({ statusCode: 204 });

    expect(receiver.received).toHaveLength(2);
    expect(receiver.connections).toBe(1);
  });

  it('does not reuse a connection whose response was cut at 1 KB', async () => {
    receiver.answer = (_request, response) => response.writeHead(200).end('x'.repeat(4 * RESPONSE_BODY_MAX_BYTES));
    await postJson(receiver.url, HEADERS, BODY, allowed);
    receiver.answer = (_request, response) => response.writeHead(204).end();
    await postJson(receiver.url, HEADERS, BODY, allowed);

    expect(receiver.connections).toBe(2);
  });

  it('does not reuse a connection whose request timed out', async () => {
    receiver.answer = (_request, response) => setTimeout(() => response.writeHead(204).end(), 300);
    expect(await postJson(receiver.url, HEADERS, BODY, { ...allowed, timeoutMs: 100 })).toMatchObject({
      error: 'Timed out after 0.1 s.',
    });
    receiver.answer = (_request, response) => response.writeHead(204).end();
    expect(await postJson(receiver.url, HEADERS, BODY, allowed)).toMatchObject({ statusCode: 204 });

    expect(receiver.connections).toBe(2);
  });

  it('sends once more on a new connection when the receiver closes a kept connection under the request', async () => {
    await postJson(receiver.url, HEADERS, BODY, allowed);
    // The receiver drops the kept connection as the second request arrives on it (its idle timeout, say).
    receiver.answer = (_request, response) => {
      receiver.answer = (_again, next) => next.writeHead(204).end();
      response.socket?.destroy();
    };

    const result = await postJson(receiver.url, HEADERS, BODY, allowed);

    expect(result).toMatchObject({ statusCode: 204 });
    expect(result.error).toBeUndefined();
    expect(receiver.connections).toBe(2);
  });

  it("does not send again when a new connection is dropped: that is the attempt's outcome", async () => {
    receiver.answer = (_request, response) => response.socket?.destroy();

    const result = await postJson(receiver.url, HEADERS, BODY, allowed);

    expect(result.error).toEqual(expect.any(String));
    expect(receiver.received).toHaveLength(1);
  });
});
