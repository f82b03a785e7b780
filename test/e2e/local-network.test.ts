/**
 * What the local stack exposes on the network, checked on the stack the e2e global setup started (`bin/local.ts`,
 * a separate process): it listens on loopback only (DynamoDB Local included), keeps idle keep-alive connections
 * longer than common clients do, and answers requests Node cannot parse in the API's error envelope.
 * The socket checks read Linux's /proc, where the tests run.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { createGateway, HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS } from '../../local/gateway';

const baseUrl = (): URL => {
  const url = process.env.E2E_BASE_URL;
  if (url === undefined) throw new Error('E2E_BASE_URL is not set: the e2e global setup did not run.');
  return new URL(url);
};

describe('local stack listening sockets', () => {
  it('are all bound to a loopback address, DynamoDB Local included', () => {
    const gatewayPort = Number(baseUrl().port);
    const sockets = listeningSockets();
    const gateway = sockets.find((socket) => socket.port === gatewayPort);
    if (gateway === undefined) throw new Error(`Nothing listens on the gateway's port ${gatewayPort}.`);
    const stackPid = ownerPid(gateway.inode);
    const inodes = socketInodes([stackPid, ...descendantPids(stackPid)]);

    const stackSockets = sockets.filter((socket) => inodes.has(socket.inode));

    // The gateway and DynamoDB Local (java, a child of the stack's process), at the least.
    expect(stackSockets.length).toBeGreaterThanOrEqual(2);
    expect(stackSockets.filter((socket) => !socket.loopback)).toEqual([]);
  });
});

describe('local gateway keep-alive', () => {
  it('keeps idle connections for at least 65 s, with the headers timeout above that as Node requires', () => {
    const server = createGateway({
      resolveHandler: () => undefined,
      notRouted: () => Promise.resolve({ statusCode: 404 }),
    });

    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThanOrEqual(65_000);
    expect(server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    expect(HEADERS_TIMEOUT_MS).toBeGreaterThan(KEEP_ALIVE_TIMEOUT_MS);
  });

  it('tells clients how long an idle connection stays open', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const response = await post(agent);

      expect(response.headers['keep-alive']).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    } finally {
      agent.destroy();
    }
  });

  it('serves a request on a keep-alive connection left idle longer than Node’s default 5 s', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await post(agent);
      await new Promise((resolveIdle) => setTimeout(resolveIdle, 6_000));

      const second = await post(agent);

      expect(first.reusedSocket).toBe(false);
      // With the server closing idle connections after 5 s, the agent would have dropped the socket and opened
      // a new one (or, racing the close, failed with ECONNRESET).
      expect(second.reusedSocket).toBe(true);
      expect(second.statusCode).toBe(404);
    } finally {
      agent.destroy();
    }
  });
});

describe('local gateway client errors', () => {
  it('answers headers over 16 KB with 431 in the error envelope', async () => {
    const response = await post(undefined, { 'x-padding': 'a'.repeat(17 * 1024) });

    expect(response.statusCode).toBe(431);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.body)).toEqual({
      error: { status: 'INVALID_ARGUMENT', message: 'Request headers are too large (limit 16 KB).' },
    });
  });

  it('answers a malformed request with 400 in the error envelope and closes the connection', async () => {
    // A header line without a colon: no HTTP client sends it, so it goes over a raw socket.
    const raw = await exchangeRaw(`POST /v2/no/such/operation HTTP/1.1\r\nHost: localhost\r\nNot a header\r\n\r\n`);

    const [head, body] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(body)).toEqual({ error: { status: 'INVALID_ARGUMENT', message: 'Malformed HTTP request.' } });
  });
});

interface Response {
  statusCode: number;
  headers: IncomingMessage['headers'];
  body: string;
  reusedSocket: boolean;
}

/** POST to a path no route serves (a cheap 404 from the stack), read to the end. */
function post(agent: Agent | undefined, headers: Record<string, string> = {}): Promise<Response> {
  const url = baseUrl();
  return new Promise((resolveResponse, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/v2/no/such/operation',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (incoming) => {
        let body = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => (body += chunk));
        incoming.on('end', () =>
          resolveResponse({
            statusCode: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body,
            reusedSocket: outgoing.reusedSocket,
          }),
        );
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end('{}');
  });
}

/** Writes `raw` on a new connection and resolves with everything the server sends until it closes it. */
function exchangeRaw(raw: string): Promise<string> {
  const url = baseUrl();
  return new Promise((resolveExchange, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolveExchange(received));
    socket.setTimeout(5_000, () =>
      socket.destroy(new Error(`The server did not close the connection; received: ${received}`)),
    );
    socket.write(raw);
  });
}

interface ListeningSocket {
  /** For the failure message. */
  address: string;
  port: number;
  inode: string;
  loopback: boolean;
}

/** Every TCP socket in LISTEN state on this machine (IPv4 and IPv6), from /proc/net/tcp{,6}. */
function listeningSockets(): ListeningSocket[] {
  const sockets: ListeningSocket[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [addressHex, portHex] = fields[1].split(':');
      const LISTEN = '0A';
      if (fields[3] !== LISTEN) continue;
      const bytes = addressBytes(addressHex);
      sockets.push({
        address: formatAddress(bytes),
        port: Number.parseInt(portHex, 16),
        inode: fields[9],
        loopback: isLoopback(bytes),
      });
    }
  }
  return sockets;
}

/** The kernel prints an address as 32-bit words in host order (little-endian here): each word's bytes reversed. */
function addressBytes(hex: string): number[] {
  const bytes: number[] = [];
  for (let word = 0; word < hex.length; word += 8) {
    const wordBytes = (hex.slice(word, word + 8).match(/../g) ?? []).map((pair) => Number.parseInt(pair, 16));
    bytes.push(...wordBytes.reverse());
  }
  return bytes;
}

function formatAddress(bytes: number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < bytes.length; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return groups.join(':');
}

/** 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6 (::ffff:127.x.y.z, how java binds 127.0.0.1). */
function isLoopback(bytes: number[]): boolean {
  if (bytes.length === 4) return bytes[0] === 127;
  const prefix = bytes.slice(0, 10).every((byte) => byte === 0);
  if (prefix && bytes[10] === 0xff && bytes[11] === 0xff) return bytes[12] === 127;
  return prefix && bytes.slice(10, 15).every((byte) => byte === 0) && bytes[15] === 1;
}

/** The process holding the socket with this inode (among the processes this user may inspect). */
function ownerPid(inode: string): number {
  for (const pid of processIds()) {
    if (socketInodes([pid]).has(inode)) return pid;
  }
  throw new Error(`No process of this user holds socket ${inode}.`);
}

function socketInodes(pids: readonly number[]): Set<string> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or one that has exited
    }
    for (const fd of fds) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (match !== null) inodes.add(match[1]);
      } catch {
        // closed between the listing and the read
      }
    }
  }
  return inodes;
}

function processIds(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** Children, grandchildren ... of `root`, from each process's parent id in /proc/<pid>/stat. */
function descendantPids(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of processIds()) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (command) state ppid ...": the command may hold spaces and parentheses, so read after the last ')'.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const found: number[] = [];
  for (let level = [root]; level.length > 0;) {
    level = level.flatMap((pid) => children.get(pid) ?? []);
    found.push(...level);
  }
  return found;
}
