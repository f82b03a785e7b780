/**
 * DynamoDB Local (Amazon's Java program) for the local stack and the tests: fetched once from the npm registry
 * (with progress lines on stderr), verified against a pinned hash, cached under `.cache/`, and run as a child process that never outlives us.
 * It listens on 127.0.0.1 only and creates its database files readable by their owner only (docs/operating.md, "Security of
 * the local stack").
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ensurePrivateDir } from './private-files';

const execFileAsync = promisify(execFile);

const PROJECT_ROOT = resolve(__dirname, '..');

/** The npm package that carries DynamoDB Local 1.25.1 in its `emulator/` folder, pinned by version and hash. */
const PACKAGE_SPEC = 'amplify-dynamodb-simulator@2.9.30';
const PACKAGE_INTEGRITY =
  'sha512-xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==';
/** Written last into an extracted copy, so a folder without it is a partial extraction. */
const MARKER_FILE = '.complete';
const MIN_JAVA_MAJOR = 17;

export const DEFAULT_CACHE_DIR = join(PROJECT_ROOT, '.cache', 'dynamodb-local');

/** What ensureDynamoDbLocal reports and how it downloads; the defaults are the real ones, tests replace them. */
export interface EnsureDynamoDbLocalOptions {
  /** Where the progress lines go, one call a line (default: stderr; stdout carries only `npm start`'s ready line). */
  report?: (line: string) => void;
  /** The registry the package comes from (default: npm's configured one, npm_config_registry, else registry.npmjs.org). */
  registry?: string;
  /** The HTTP client of the download (default: the global fetch). */
  fetch?: (url: string) => Promise<Response>;
  /** When the direct download fails (a proxy, a registry that needs a login): `npm pack` into a folder, as before. */
  npmPack?: (destination: string) => Promise<string>;
  /** The tarball's expected SRI hash; tests only, with a tarball of their own. */
  integrity?: string;
}

const PACKAGE_NAME = PACKAGE_SPEC.slice(0, PACKAGE_SPEC.lastIndexOf('@'));
const PACKAGE_VERSION = PACKAGE_SPEC.slice(PACKAGE_SPEC.lastIndexOf('@') + 1);
/** Progress lines while downloading: one per tenth of the package, or per 10 MB when its size is not known. */
const PROGRESS_STEP_PERCENT = 10;
const PROGRESS_STEP_BYTES = 10_000_000;

const megabytes = (bytes: number): string => `${(bytes / 1_000_000).toFixed(1)} MB`;

/**
 * Makes sure the DynamoDB Local jar and its native libraries are in the cache; returns the folder holding
 * `DynamoDBLocal.jar` and `DynamoDBLocal_lib/`. Downloads only when no complete copy is cached; the first start
 * says what it fetches and how far it got (some tens of MB, about 30 s), and that later starts use the cached copy.
 */
export async function ensureDynamoDbLocal(
  cacheDir: string = DEFAULT_CACHE_DIR,
  options: EnsureDynamoDbLocalOptions = {},
): Promise<string> {
  const target = join(cacheDir, PACKAGE_SPEC.replace('@', '-'));
  if (existsSync(join(target, MARKER_FILE))) return target;

  const report = options.report ?? ((line: string) => process.stderr.write(`${line}\n`));
  const say = (text: string) => report(`DynamoDB Local: ${text}`);
  const integrity = options.integrity ?? PACKAGE_INTEGRITY;
  mkdirSync(cacheDir, { recursive: true });
  const downloadDir = await mkdtemp(join(tmpdir(), 'dynamodb-local-download-'));
  // Extract next to the target (same file system) so the final rename is atomic.
  const staging = join(cacheDir, `.staging-${randomUUID()}`);
  try {
    let tarball: string;
    try {
      tarball = await downloadTarball(downloadDir, options, say);
    } catch (error) {
      say(
        `the download failed (${(error as Error).message}); trying \`npm pack ${PACKAGE_SPEC}\` instead, which shows no progress.`,
      );
      tarball = await (options.npmPack ?? downloadPackage)(downloadDir);
    }
    say('checking its hash and unpacking it.');
    await verifyIntegrity(tarball, integrity);
    mkdirSync(staging);
    await execFileAsync('tar', ['-xzf', tarball, '-C', staging, '--strip-components=2', 'package/emulator']);
    if (!existsSync(join(staging, 'DynamoDBLocal.jar'))) {
      throw new Error(`${PACKAGE_SPEC} has no emulator/DynamoDBLocal.jar; the cached copy cannot be built.`);
    }
    writeFileSync(join(staging, MARKER_FILE), `${integrity}\n`);
    publish(staging, target);
    say(`ready, cached in ${target}; later starts use this copy and download nothing.`);
    return target;
  } finally {
    rmSync(downloadDir, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The package's tarball, fetched from the registry into `destination` with a progress line per step. */
async function downloadTarball(
  destination: string,
  options: EnsureDynamoDbLocalOptions,
  say: (text: string) => void,
): Promise<string> {
  const registry = (options.registry ?? nonEmptyEnv('npm_config_registry') ?? 'https://registry.npmjs.org/').replace(
    /\/*$/,
    '/',
  );
  const url = `${registry}${PACKAGE_NAME}/-/${PACKAGE_NAME.split('/').at(-1)}-${PACKAGE_VERSION}.tgz`;
  say(`not cached yet: downloading it once (the npm package ${PACKAGE_SPEC}, some tens of MB) from ${url}`);
  const started = Date.now();
  const response = await (options.fetch ?? fetch)(url);
  if (!response.ok || response.body === null) throw new Error(`GET ${url} answered ${response.status}`);
  const total = Number(response.headers.get('content-length')) || undefined;
  const file = join(destination, 'package.tgz');
  const out = createWriteStream(file);
  const finished = new Promise<void>((resolveFinished, rejectFinished) => {
    out.once('finish', resolveFinished);
    out.once('error', rejectFinished);
  });
  let received = 0;
  let nextReport = total === undefined ? PROGRESS_STEP_BYTES : PROGRESS_STEP_PERCENT;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      received += chunk.byteLength;
      if (!out.write(chunk)) await once(out, 'drain');
      if (total === undefined) {
        if (received < nextReport) continue;
        say(`${megabytes(received)} so far`);
        nextReport = (Math.floor(received / PROGRESS_STEP_BYTES) + 1) * PROGRESS_STEP_BYTES;
      } else {
        const percent = Math.floor((received * 100) / total);
        if (percent < nextReport) continue;
        say(`${percent}% (${megabytes(received)} of ${megabytes(total)})`);
        nextReport = (Math.floor(percent / PROGRESS_STEP_PERCENT) + 1) * PROGRESS_STEP_PERCENT;
      }
    }
  } finally {
    out.end();
  }
  await finished;
  if (total !== undefined && received !== total)
    throw new Error(`GET ${url} ended after ${received} of ${total} bytes`);
  say(`downloaded ${megabytes(received)} in ${Math.round((Date.now() - started) / 1000)} s.`);
  return file;
}

function nonEmptyEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

async function downloadPackage(destination: string): Promise<string> {
  await execFileAsync('npm', ['pack', PACKAGE_SPEC, '--pack-destination', destination], {
    env: { ...process.env, npm_config_loglevel: 'error' },
    maxBuffer: 16 * 1024 * 1024,
  });
  const tarballs = readdirSync(destination).filter((name) => name.endsWith('.tgz'));
  if (tarballs.length !== 1) {
    throw new Error(`npm pack ${PACKAGE_SPEC} produced ${tarballs.length} tarballs instead of one.`);
  }
  return join(destination, tarballs[0]);
}

async function verifyIntegrity(file: string, integrity: string): Promise<void> {
  const [algorithm, expected] = integrity.split(/-(.*)/s);
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  const actual = hash.digest('base64');
  if (actual !== expected) {
    throw new Error(
      `Integrity check failed for ${PACKAGE_SPEC}: expected ${integrity}, got ${algorithm}-${actual}; refusing to run it.`,
    );
  }
}

/** Renames the staged copy into place; when another process got there first, its complete copy wins. */
function publish(staging: string, target: string): void {
  try {
    renameSync(staging, target);
  } catch (error) {
    if (existsSync(join(target, MARKER_FILE))) return;
    throw error;
  }
}

/**
 * The SDK warns once per process that Node 20 support ends; it says nothing actionable for local runs or tests.
 * Call before the first SDK client of the process, which is when the warning is emitted.
 */
export function silenceNodeVersionWarning(): void {
  // The SDK compares against the exact string "true" (@aws-sdk/core emitWarningIfUnsupportedVersion).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/** Java is missing or too old; the message is one sentence saying what to install. */
export class JavaRequirementError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JavaRequirementError';
  }
}

/** Throws a JavaRequirementError when `java` is missing or older than 17. */
export async function checkJava(): Promise<void> {
  const major = await javaMajorVersion();
  if (major !== undefined && major >= MIN_JAVA_MAJOR) return;
  const found = major === undefined ? 'no working `java` was found' : `found Java ${major}`;
  throw new JavaRequirementError(
    `DynamoDB Local needs Java ${MIN_JAVA_MAJOR} or newer (${found}): install a JDK/JRE ${MIN_JAVA_MAJOR}+ ` +
      '(for example `apt-get install openjdk-17-jre-headless`) and make sure `java` is on PATH.',
  );
}

/** The major version `java -version` reports (it prints to stderr), or undefined when java cannot run. */
async function javaMajorVersion(): Promise<number | undefined> {
  let output: string;
  try {
    // The environment is passed explicitly so that a PATH changed at run time (or in a test sandbox) is the one used.
    const { stdout, stderr } = await execFileAsync('java', ['-version'], { timeout: 30_000, env: process.env });
    output = `${stderr}\n${stdout}`;
  } catch {
    return undefined;
  }
  const match = /version "(\d+)(?:\.(\d+))?/.exec(output);
  if (match === null) return undefined;
  const first = Number(match[1]);
  // Java 8 and older report themselves as "1.8.0_x".
  return first === 1 && match[2] !== undefined ? Number(match[2]) : first;
}

export interface StartDynamoDbLocalOptions {
  /** 0 or undefined: pick a free port. */
  port?: number;
  /** Folder for the database file (created when missing); ignored when `inMemory`. */
  dbPath?: string;
  /** Keep everything in memory (the default when no `dbPath` is given). */
  inMemory?: boolean;
  /** Folder from ensureDynamoDbLocal; fetched into the default cache when omitted. */
  emulatorDir?: string;
  /** How long to wait for the first successful ListTables. */
  startTimeoutMs?: number;
  /** Aborts the wait for readiness (the process is stopped). */
  signal?: AbortSignal;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  /** Resolves once the java process has exited (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
  process: ChildProcess;
}

/**
 * A ceiling for Java to start and answer, not a budget: it answers in a few seconds on a quiet machine, and a 2-core
 * machine at a load of 15 (the test tiers, a bench and other work side by side) took over 60 s.
 */
const DEFAULT_START_TIMEOUT_MS = 180_000;
const STOP_GRACE_MS = 5_000;
const OUTPUT_TAIL_CHARS = 4_000;
/** An auto-picked port can be taken between our check and java's bind; try a few before giving up. */
const AUTO_PORT_ATTEMPTS = 3;

/** Starts DynamoDB Local and resolves once it answers ListTables. */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const emulatorDir = options.emulatorDir ?? (await ensureDynamoDbLocal());
  const storage = storageArgs(options);
  const explicitPort = options.port !== undefined && options.port !== 0 ? options.port : undefined;

  if (explicitPort !== undefined && !(await isPortFree(explicitPort))) {
    throw new Error(`Cannot start DynamoDB Local: port ${explicitPort} is already in use.`);
  }
  for (let attempt = 1; ; attempt++) {
    const port = explicitPort ?? (await pickFreePort());
    try {
      return await launch(emulatorDir, port, storage, options);
    } catch (error) {
      const retry = explicitPort === undefined && error instanceof PortTakenError && attempt < AUTO_PORT_ATTEMPTS;
      if (!retry) throw error;
    }
  }
}

function storageArgs(options: StartDynamoDbLocalOptions): string[] {
  if (options.inMemory === true || options.dbPath === undefined) return ['-inMemory'];
  // DynamoDB Local refuses a dbPath that does not exist yet ("Invalid directory for database creation"). The folder
  // holds every tenant's data: only its owner may enter it.
  ensurePrivateDir(options.dbPath);
  return ['-dbPath', resolve(options.dbPath)];
}

class PortTakenError extends Error {}

async function launch(
  emulatorDir: string,
  port: number,
  storage: string[],
  options: StartDynamoDbLocalOptions,
): Promise<DynamoDbLocal> {
  // Private (mkdtemp makes it 0700) and removed once java has read it: readiness comes after the configuration.
  const launchDir = await mkdtemp(join(tmpdir(), 'dynamodb-local-launch-'));
  const configuration = join(launchDir, 'loopback.xml');
  writeFileSync(configuration, loopbackConfiguration([...storage, '-sharedDb', '-disableTelemetry']), { mode: 0o600 });
  const javaArgs = [
    `-D${PORT_PROPERTY}=${port}`,
    `-Djava.library.path=${join(emulatorDir, 'DynamoDBLocal_lib')}`,
    // The jar's main class sets these two when it loads, which is now after Jetty's logging has started.
    '-Dorg.eclipse.jetty.util.log.announce=false',
    '-Dorg.eclipse.jetty.LEVEL=WARN',
    '-cp',
    'DynamoDBLocal.jar',
    'org.eclipse.jetty.xml.XmlConfiguration',
    configuration,
  ];
  const [command, args] = withParentDeathSignal(...withPrivateUmask('java', javaArgs));
  const child = spawn(command, args, { cwd: emulatorDir, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = captureTail(child);
  const exited = exitPromise(child);

  // Runs on any process.exit (including from a failed startup): the last chance to not leave java behind.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const stop = (): Promise<void> => stopChild(child, exited);
  const endpoint = `http://${DYNAMODB_LOCAL_HOST}:${port}`;
  try {
    await waitUntilReady(endpoint, child, exited, output, options);
  } catch (error) {
    await stop();
    throw error;
  } finally {
    rmSync(launchDir, { recursive: true, force: true });
  }
  return { endpoint, port, stop, process: child };
}

/** Where DynamoDB Local listens: it has no authentication, so nothing beyond this machine may reach it. */
export const DYNAMODB_LOCAL_HOST = '127.0.0.1';
/** Carries the port on java's command line: the launch configuration reads it there, and so can `ps`. */
const PORT_PROPERTY = 'dynamodb.local.port';

/** Whether a command line (as `ps -o args` prints it) is a DynamoDB Local started here on `port`. */
export function isDynamoDbLocalCommandLine(commandLine: string, port: number): boolean {
  const portArgument = new RegExp(String.raw`(^|\s)-Ddynamodb\.local\.port=${port}(\s|$)`);
  return commandLine.includes('DynamoDBLocal.jar') && portArgument.test(commandLine);
}

/**
 * DynamoDB Local has no option for its listening address: its server (DynamoDBProxyServer) makes a Jetty connector
 * on every interface. This Jetty XML configuration, run by the XmlConfiguration class the jar ships, builds the
 * server exactly as the jar's own main does (ServerRunner.createServerFromCommandLineArgs: the same options, checks
 * and start-up banner), sets the host of its one connector to 127.0.0.1 while it is not started yet, and starts it.
 * The connector's server sits in a private field; the jar is pinned by hash, so the field is known, and were it
 * renamed, java would exit with NoSuchFieldException instead of listening everywhere.
 */
function loopbackConfiguration(dynamoDbLocalArgs: readonly string[]): string {
  const items = dynamoDbLocalArgs.map((arg) => `        <Item type="String">${escapeXml(arg)}</Item>`).join('\n');
  return `<?xml version="1.0"?>
<!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "http://www.eclipse.org/jetty/configure_9_3.dtd">
<Configure class="java.lang.Object">
  <Call id="proxy" class="com.amazonaws.services.dynamodbv2.local.main.ServerRunner" name="createServerFromCommandLineArgs">
    <Arg>
      <Array type="java.lang.String">
        <Item type="String">-port</Item>
        <Item type="String"><SystemProperty name="${PORT_PROPERTY}"/></Item>
${items}
      </Array>
    </Arg>
  </Call>
  <Call class="java.lang.Class" name="forName">
    <Arg>com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer</Arg>
    <Call id="serverField" name="getDeclaredField"><Arg>server</Arg></Call>
  </Call>
  <Ref refid="serverField">
    <Call name="setAccessible"><Arg type="boolean">true</Arg></Call>
    <Call id="jetty" name="get"><Arg><Ref refid="proxy"/></Arg></Call>
  </Ref>
  <Ref refid="jetty"><Call id="connectors" name="getConnectors"/></Ref>
  <Call class="java.lang.reflect.Array" name="get">
    <Arg><Ref refid="connectors"/></Arg>
    <Arg type="int">0</Arg>
    <Set name="host">${DYNAMODB_LOCAL_HOST}</Set>
  </Call>
  <Ref refid="proxy"><Call name="start"/></Ref>
</Configure>
`;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * Runs the command under umask 077: DynamoDB Local has no option for the mode of the database files it creates,
 * and they hold every tenant's data (0600, not 0644). `sh` execs the command, so the child's pid stays java's.
 */
function withPrivateUmask(command: string, args: string[]): [string, string[]] {
  if (process.platform === 'win32') return [command, args];
  return ['/bin/sh', ['-c', 'umask 077 && exec "$0" "$@"', command, ...args]];
}

/**
 * On Linux, `setpriv --pdeathsig KILL` makes the kernel kill java when our process dies, even from SIGKILL,
 * where no exit handler runs. setpriv execs the command (and the signal setting survives the exec of sh into java),
 * so the child's pid is java's. Elsewhere java runs directly.
 */
function withParentDeathSignal(command: string, args: string[]): [string, string[]] {
  if (process.platform === 'linux' && hasSetpriv()) return ['setpriv', ['--pdeathsig', 'KILL', '--', command, ...args]];
  return [command, args];
}

let setprivAvailable: boolean | undefined;
function hasSetpriv(): boolean {
  setprivAvailable ??= ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'].some((path) => existsSync(path));
  return setprivAvailable;
}

interface OutputTail {
  text(): string;
}

function captureTail(child: ChildProcess): OutputTail {
  let tail = '';
  const append = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return { text: () => tail.trim() };
}

function exitPromise(child: ChildProcess): Promise<void> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) resolveExit();
    else child.once('exit', () => resolveExit());
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

async function waitUntilReady(
  endpoint: string,
  child: ChildProcess,
  exited: Promise<void>,
  output: OutputTail,
  options: StartDynamoDbLocalOptions,
): Promise<void> {
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  try {
    for (;;) {
      // Java keeps running after a failed bind, so the message is the only sign that the port was taken.
      if (/Failed to bind|BindException/.test(output.text())) {
        throw new PortTakenError(`DynamoDB Local could not bind ${endpoint}.\n${output.text()}`);
      }
      if (hasExited) {
        throw new Error(`DynamoDB Local exited during startup (code ${child.exitCode}).\n${output.text()}`);
      }
      if (options.signal?.aborted === true) throw new Error('DynamoDB Local startup was aborted.');
      if (Date.now() > deadline) {
        throw new Error(`DynamoDB Local did not answer at ${endpoint} within ${timeoutMs} ms.\n${output.text()}`);
      }
      if (await answersListTables(client)) return;
      await delay(200);
    }
  } finally {
    client.destroy();
  }
}

async function answersListTables(client: DynamoDBClient): Promise<boolean> {
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolveDelay) => setTimeout(resolveDelay, ms));
}

/** A port nothing listens on right now (the OS picks it). */
export function pickFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolvePort(port) : reject(new Error('Could not pick a free port.'))));
    });
  });
}

/** Binding the address DynamoDB Local binds tells whether something already holds the port there. */
function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, DYNAMODB_LOCAL_HOST, () => server.close(() => resolveFree(true)));
  });
}
