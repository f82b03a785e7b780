/**
 * The first start's download of DynamoDB Local (local/dynamodb-local.ts, ensureDynamoDbLocal) says what it fetches,
 * how far it got, and that the copy is cached afterwards: it was silent for about 30 s. The registry is a stand-in
 * serving a small package of the same shape in chunks, so no network is needed.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDynamoDbLocal } from '../../local/dynamodb-local';

let dir: string;
let tarball: Buffer;
let integrity: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'dynamodb-local-download-test-'));
  // A package shaped like amplify-dynamodb-simulator: package/emulator/DynamoDBLocal.jar and its libraries, with
  // some incompressible bytes so it comes in many chunks.
  const emulator = join(dir, 'src', 'package', 'emulator');
  mkdirSync(join(emulator, 'DynamoDBLocal_lib'), { recursive: true });
  writeFileSync(
    join(emulator, 'DynamoDBLocal.jar'),
    createHash('sha512').update('jar').digest().toString('hex').repeat(2_000),
  );
  writeFileSync(
    join(emulator, 'DynamoDBLocal_lib', 'sqlite4java.jar'),
    Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 251)),
  );
  execFileSync('tar', ['-czf', join(dir, 'package.tgz'), '-C', join(dir, 'src'), 'package']);
  tarball = readFileSync(join(dir, 'package.tgz'));
  integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The registry's answer: the tarball in `chunks` pieces, with or without its length. */
function registry(options: { withLength: boolean; chunks?: number }) {
  const urls: string[] = [];
  const fetch = async (url: string) => {
    urls.push(url);
    const size = Math.ceil(tarball.length / (options.chunks ?? 20));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < tarball.length; at += size)
          controller.enqueue(new Uint8Array(tarball.subarray(at, at + size)));
        controller.close();
      },
    });
    return new Response(body, {
      status: 200,
      headers: options.withLength ? { 'content-length': String(tarball.length) } : {},
    });
  };
  return { fetch, urls };
}

describe('the DynamoDB Local download', () => {
  it('says what it fetches, how far it got in tenths, and where it is cached', async () => {
    const { fetch, urls } = registry({ withLength: true });
    const lines: string[] = [];
    const cacheDir = join(dir, 'cache');

    const emulatorDir = await ensureDynamoDbLocal(cacheDir, {
      fetch,
      integrity,
      registry: 'https://registry.example/',
      report: (line) => lines.push(line),
    });

    expect(urls).toEqual([
      'https://registry.example/amplify-dynamodb-simulator/-/amplify-dynamodb-simulator-2.9.30.tgz',
    ]);
    expect(existsSync(join(emulatorDir, 'DynamoDBLocal.jar'))).toBe(true);
    expect(lines.every((line) => line.startsWith('DynamoDB Local: '))).toBe(true);
    expect(lines[0]).toMatch(
      /not cached yet: downloading it once \(the npm package amplify-dynamodb-simulator@2\.9\.30.*\) from https:\/\/registry\.example\//,
    );
    const percents = lines
      .map((line) => /: (\d+)% \(\d+\.\d MB of \d+\.\d MB\)$/.exec(line)?.[1])
      .filter((percent) => percent !== undefined)
      .map(Number);
    expect(percents.length).toBeGreaterThanOrEqual(9);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(percents.at(-1)).toBe(100);
    expect(lines.slice(-3, -1)).toEqual([
      expect.stringMatching(/downloaded \d+\.\d MB in \d+ s\.$/),
      'DynamoDB Local: checking its hash and unpacking it.',
    ]);
    expect(lines.at(-1)).toBe(
      `DynamoDB Local: ready, cached in ${emulatorDir}; later starts use this copy and download nothing.`,
    );
  });

  it('is silent and downloads nothing once cached', async () => {
    const first = registry({ withLength: true });
    const cacheDir = join(dir, 'cache');
    const emulatorDir = await ensureDynamoDbLocal(cacheDir, { fetch: first.fetch, integrity, report: () => undefined });
    const again = registry({ withLength: true });
    const lines: string[] = [];

    expect(
      await ensureDynamoDbLocal(cacheDir, { fetch: again.fetch, integrity, report: (line) => lines.push(line) }),
    ).toBe(emulatorDir);

    expect({ fetched: again.urls, lines }).toEqual({ fetched: [], lines: [] });
  });

  it('counts megabytes when the registry does not say the size', async () => {
    const { fetch } = registry({ withLength: false });
    const lines: string[] = [];

    await ensureDynamoDbLocal(join(dir, 'cache'), { fetch, integrity, report: (line) => lines.push(line) });

    expect(lines.some((line) => /%/.test(line))).toBe(false);
    expect(lines).toContainEqual(expect.stringMatching(/downloaded \d+\.\d MB in \d+ s\.$/));
  });

  it('falls back to npm pack, saying so, when the direct download fails', async () => {
    const lines: string[] = [];
    const fetch = async (): Promise<Response> => {
      throw new TypeError('fetch failed');
    };
    const npmPack = async (destination: string) => {
      writeFileSync(join(destination, 'packed.tgz'), tarball);
      return join(destination, 'packed.tgz');
    };

    const emulatorDir = await ensureDynamoDbLocal(join(dir, 'cache'), {
      fetch,
      npmPack,
      integrity,
      report: (line) => lines.push(line),
    });

    expect(existsSync(join(emulatorDir, 'DynamoDBLocal.jar'))).toBe(true);
    expect(lines).toContain(
      'DynamoDB Local: the download failed (fetch failed); trying `npm pack amplify-dynamodb-simulator@2.9.30` instead, which shows no progress.',
    );
  });

  it('refuses a package whose hash is not the pinned one, and caches nothing', async () => {
    const { fetch } = registry({ withLength: true });
    const cacheDir = join(dir, 'cache');

    await expect(
      ensureDynamoDbLocal(cacheDir, {
        fetch,
        integrity: `sha512-${createHash('sha512').update('other').digest('base64')}`,
        report: () => undefined,
      }),
    ).rejects.toThrow(/Integrity check failed/);

    expect(existsSync(join(cacheDir, 'amplify-dynamodb-simulator-2.9.30'))).toBe(false);
  });
});
