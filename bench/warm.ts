/**
 * Issue 16, item 4: what the middleware stack and the local gateway add to a warm request, and how many requests
 * per second the local stack serves.
 *
 * Overhead: for each operation, one warm request is recorded at the DynamoDB client (the marshalled commands it
 * sends, and which of them were in flight together); then N rounds each time the same request three ways, in turn
 * so that background work (the stream workers) and machine noise fall on all three alike:
 *   direct     — the recorded commands replayed with the same client (concurrent ones concurrently);
 *   in-process — the handler through its real middleware stack with an API Gateway event (test/support/invoke.ts);
 *   HTTP       — a POST to the local gateway over a keep-alive connection.
 * The ratios to `direct` are what the service costs on top of its DynamoDB calls; the goal is ≤ 1.2×. All three run
 * under the route's grant check (a local-only middleware on the client), so it adds to each alike. Writes get a
 * fresh activity id per call, in the replay too (the recorded id is replaced in every string of the commands).
 *
 * Throughput: autocannon, in a process of its own, against the gateway for a fixed time. DynamoDB Local (Java),
 * the stack's Node process and autocannon share the machine's cores: the figures are the whole local stack's.
 *
 * WARM_THROUGHPUT=0 skips the throughput part, to profile the overhead part alone:
 * `WARM_THROUGHPUT=0 node --cpu-prof --cpu-prof-dir=/tmp/warm-prof --import tsx bench/run.ts warm`.
 */
import { execFile } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Agent, request as httpRequest } from 'node:http';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type BatchGetItemCommandInput,
  type BatchWriteItemCommandInput,
  type DeleteItemCommandInput,
  type DynamoDBClient,
  type GetItemCommandInput,
  type PutItemCommandInput,
  type QueryCommandInput,
  type TransactGetItemsCommandInput,
  type TransactWriteItemsCommandInput,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { Result as AutocannonResult } from 'autocannon';
import { runAsRoute } from '../local/grant-check';
import { median, percentile, startBenchStack, type BenchStack } from './harness';

/** Timed rounds per operation (each one request of every kind), after WARM_UP untimed ones. */
const ROUNDS = 500;
const WARM_UP = 50;
const GOAL = 1.2;
const ORG_USERS = 1_000;
const PAGE_SIZE = 100;
const CONNECTIONS = 10;
const SECONDS = 10;

const execFileAsync = promisify(execFile);

/** One command as the handler sent it: its name, its marshalled input, and when it was in flight. */
interface RecordedCommand {
  name: string;
  input: object;
  sentAt: number;
  doneAt: number;
}

/** An operation measured: its path, the request of call `n`, and the string in the request that varies with `n`. */
interface Operation {
  name: string;
  path: string;
  data(n: number): unknown;
  variable?: (n: number) => string;
}

/** Sends a recorded command again, by its name, through `client`. Only the commands these operations send. */
function sender(client: DynamoDBClient): Record<string, (input: object) => Promise<unknown>> {
  return {
    GetItemCommand: (input) => client.send(new GetItemCommand(input as GetItemCommandInput)),
    QueryCommand: (input) => client.send(new QueryCommand(input as QueryCommandInput)),
    BatchGetItemCommand: (input) => client.send(new BatchGetItemCommand(input as BatchGetItemCommandInput)),
    TransactGetItemsCommand: (input) => client.send(new TransactGetItemsCommand(input as TransactGetItemsCommandInput)),
    PutItemCommand: (input) => client.send(new PutItemCommand(input as PutItemCommandInput)),
    UpdateItemCommand: (input) => client.send(new UpdateItemCommand(input as UpdateItemCommandInput)),
    DeleteItemCommand: (input) => client.send(new DeleteItemCommand(input as DeleteItemCommandInput)),
    BatchWriteItemCommand: (input) => client.send(new BatchWriteItemCommand(input as BatchWriteItemCommandInput)),
    TransactWriteItemsCommand: (input) =>
      client.send(new TransactWriteItemsCommand(input as TransactWriteItemsCommandInput)),
  };
}

/** The commands of one request, only those sent inside `record` (the stream workers share the client). */
class CommandRecorder {
  private readonly active = new AsyncLocalStorage<RecordedCommand[]>();

  constructor(client: DynamoDBClient) {
    // At the build step the document client has marshalled the input: what is recorded is what goes on the wire.
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const log = this.active.getStore();
        if (log === undefined) return next(args);
        const entry: RecordedCommand = {
          name: context.commandName ?? '',
          input: structuredClone(args.input),
          sentAt: performance.now(),
          doneAt: 0,
        };
        log.push(entry);
        const output = await next(args);
        entry.doneAt = performance.now();
        return output;
      },
      { step: 'build', name: 'warmBenchRecorder' },
    );
  }

  async record(work: () => Promise<unknown>): Promise<RecordedCommand[]> {
    const log: RecordedCommand[] = [];
    await this.active.run(log, work);
    return log;
  }
}

/**
 * The commands in waves as the handler issued them: a command sent while all of the current wave were still
 * waiting for their answers was in flight with them (Promise.all); one sent later waited and starts the next wave.
 */
function waves(commands: RecordedCommand[]): RecordedCommand[][] {
  const result: RecordedCommand[][] = [];
  for (const command of commands) {
    const current = result.at(-1);
    if (current !== undefined && command.sentAt < Math.min(...current.map((c) => c.doneAt))) current.push(command);
    else result.push([command]);
  }
  return result;
}

/** `value` with `from` replaced by `to` in every string; binary values are kept as they are. */
function replaced(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value.split(from).join(to);
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map((item) => replaced(item, from, to));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaced(v, from, to)]));
  return value;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** A POST over one keep-alive connection (lighter on the shared CPU than fetch); the status and body text. */
function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent: keepAlive,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Latencies {
  direct: number[];
  inProcess: number[];
  http: number[];
}

interface OverheadRow {
  operation: Operation;
  /** The recorded commands by step: `GetItem → Query`, concurrent ones joined with `+`. */
  steps: string;
  calls: number;
  waves: number;
  ms: Latencies;
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function measureOverhead(
  bench: BenchStack,
  headers: Record<string, string>,
  operation: Operation,
  counter: { next: number },
): Promise<OverheadRow> {
  const { dynamodb } = await import('../shared/db/client');
  const { invoke, routeHandler } = await import('../test/support/invoke');
  const send = sender(dynamodb);
  const handler = routeHandler(operation.path);
  const inProcess = async (n: number) => {
    const response = await invoke(handler, operation.path, operation.data(n), { headers, contract: false });
    if (response.statusCode !== 200)
      throw new Error(`${operation.name} failed in-process: ${JSON.stringify(response.body)}`);
  };
  const overHttp = async (n: number) => {
    const response = await post(
      `${bench.stack.baseUrl}${operation.path}`,
      JSON.stringify({ data: operation.data(n) }),
      headers,
    );
    if (response.status !== 200) throw new Error(`${operation.name} failed over HTTP: ${response.text}`);
  };

  for (let i = 0; i < WARM_UP; i += 1) {
    await inProcess(counter.next++);
    await overHttp(counter.next++);
  }
  const recordedAs = counter.next++;
  const recorder = new CommandRecorder(dynamodb);
  const recorded = await recorder.record(() => inProcess(recordedAs));
  dynamodb.middlewareStack.remove('warmBenchRecorder');
  const plan = waves(recorded);
  // The replay of call `n`: its inputs made before the clock starts; only sending is timed.
  const replayOf = (n: number) => {
    const from = operation.variable?.(recordedAs);
    const to = operation.variable?.(n);
    const prepared = plan.map((wave) =>
      wave.map((c) => ({
        name: c.name,
        input: from === undefined || to === undefined ? c.input : (replaced(c.input, from, to) as object),
      })),
    );
    return () =>
      runAsRoute(operation.path, async () => {
        for (const wave of prepared) await Promise.all(wave.map((c) => send[c.name](c.input)));
      });
  };
  for (const command of recorded)
    if (send[command.name] === undefined) throw new Error(`No replay for ${command.name}.`);
  for (let i = 0; i < WARM_UP; i += 1) await replayOf(counter.next++)();

  const ms: Latencies = { direct: [], inProcess: [], http: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const replay = replayOf(counter.next++);
    ms.direct.push(await time(replay));
    const n = counter.next++;
    ms.inProcess.push(await time(() => inProcess(n)));
    const m = counter.next++;
    ms.http.push(await time(() => overHttp(m)));
  }
  const steps = plan.map((wave) => wave.map((c) => c.name.replace(/Command$/, '')).join(' + ')).join(' → ');
  return { operation, steps, calls: recorded.length, waves: plan.length, ms };
}

interface ThroughputRow {
  name: string;
  result: AutocannonResult;
}

/** autocannon in a child process (its own event loop), `[<id>]` in the body replaced by a fresh id per request. */
async function throughput(
  bench: BenchStack,
  headers: Record<string, string>,
  name: string,
  path: string,
  body: string,
): Promise<ThroughputRow> {
  const args = [
    require.resolve('autocannon/autocannon.js'),
    '-c',
    String(CONNECTIONS),
    '-d',
    String(SECONDS),
    '-m',
    'POST',
    '-H',
    'content-type=application/json',
    ...Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]),
    '-b',
    body,
    '-I',
    '-j',
    `${bench.stack.baseUrl}${path}`,
  ];
  const { stdout } = await execFileAsync(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 });
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return { name, result: JSON.parse(last) as AutocannonResult };
}

const userRecord = (n: number) => ({
  userId: `user-${String(n).padStart(5, '0')}`,
  name: `User ${n}`,
  email: `user${n}@example.com`,
});
const activityId = (n: number) => `warm-act-${String(n).padStart(9, '0')}`;
const smallActivity = (id: string) => ({
  id,
  featureType: 'comment',
  actionType: 'comment.add',
  actionUser: { userId: 'user-00001', name: 'User 1', email: 'user1@example.com' },
  targetEntityId: 'annotation-1',
  displayMessageTemplate: '{{actionUser.name}} commented',
});

const fixed = (ms: number) => ms.toFixed(ms < 10 ? 2 : 1);

export async function run(): Promise<void> {
  const bench = await startBenchStack();
  try {
    const { headers } = await bench.newApiKey();
    await bench.enableActivityLogs(headers);
    for (let batch = 0; batch < ORG_USERS / 100; batch += 1) {
      const users = Array.from({ length: 100 }, (_, i) => userRecord(batch * 100 + i));
      const added = await bench.post('/v2/users/add', { organizationId: 'warm-org', users }, headers);
      if (added.status !== 200) throw new Error(`Add Users failed: ${JSON.stringify(added.body)}`);
    }
    // Measured as deployed: no ReturnConsumedCapacity on the commands.
    bench.meter.detach();

    const operations: Operation[] = [
      { name: 'Get Activity Config', path: '/v2/workspace/activityconfig/get', data: () => ({}) },
      {
        name: `Get Users, page 1 of ${PAGE_SIZE} (of ${ORG_USERS.toLocaleString('en')})`,
        path: '/v2/users/get',
        data: () => ({ organizationId: 'warm-org', pageSize: PAGE_SIZE }),
      },
      {
        name: 'Add Activities, 1 record',
        path: '/v2/activities/add',
        data: (n) => ({ organizationId: 'warm-org', documentId: 'doc', activities: [smallActivity(activityId(n))] }),
        variable: activityId,
      },
    ];
    const counter = { next: 0 };
    const overhead: OverheadRow[] = [];
    for (const operation of operations) overhead.push(await measureOverhead(bench, headers, operation, counter));

    const rates: ThroughputRow[] = [];
    if (process.env.WARM_THROUGHPUT !== '0') {
      rates.push(
        await throughput(
          bench,
          headers,
          'Get Activity Config',
          '/v2/workspace/activityconfig/get',
          JSON.stringify({ data: {} }),
        ),
      );
      rates.push(
        await throughput(
          bench,
          headers,
          `Get Users, page 1 of ${PAGE_SIZE}`,
          '/v2/users/get',
          JSON.stringify({ data: { organizationId: 'warm-org', pageSize: PAGE_SIZE } }),
        ),
      );
      rates.push(
        await throughput(
          bench,
          headers,
          'Add Activities, 1 record',
          '/v2/activities/add',
          JSON.stringify({
            data: { organizationId: 'warm-rps', documentId: 'doc', activities: [smallActivity('[<id>]')] },
          }),
        ),
      );
    }

    console.log(
      `\nWarm overhead: ${ROUNDS} rounds after ${WARM_UP} warm-up, one request at a time (goal ≤ ${GOAL}× direct)\n`,
    );
    console.log(
      '| operation | DynamoDB calls (sequential steps) | direct median / p99 ms | in-process median / p99 ms | × direct | HTTP median / p99 ms | × direct |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const row of overhead) {
      const { direct, inProcess, http } = row.ms;
      const base = median(direct);
      const cell = (values: number[]) => `${fixed(median(values))} / ${fixed(percentile(values, 99))}`;
      const ratio = (values: number[]) =>
        `${(median(values) / base).toFixed(2)}${median(values) / base <= GOAL ? '' : ' ✗'}`;
      console.log(
        `| ${row.operation.name} | ${row.calls} (${row.waves}) | ${cell(direct)} | ${cell(inProcess)} | ${ratio(inProcess)} | ${cell(http)} | ${ratio(http)} |`,
      );
    }
    console.log('');
    for (const row of overhead) console.log(`${row.operation.name}: ${row.steps}`);
    if (rates.length === 0) return;
    console.log(
      `\nThroughput over HTTP: autocannon, ${CONNECTIONS} connections, ${SECONDS} s each (DynamoDB Local, the stack and autocannon on ${availableParallelism()} cores)\n`,
    );
    console.log('| operation | requests | req/s (mean) | latency p50 ms | p99 ms | non-2xx | errors |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const { name, result } of rates) {
      console.log(
        `| ${name} | ${result.requests.total} | ${result.requests.average.toFixed(0)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx} | ${result.errors + result.timeouts} |`,
      );
    }
  } finally {
    await bench.stack.stop();
  }
}
