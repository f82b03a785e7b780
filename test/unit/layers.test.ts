/**
 * The layers of the code (docs/architecture.md "Layers"), lowest first. A file may import from its own layer and the
 * layers below it, never from above, and no files may import each other in a cycle. The test names each file and
 * import that breaks a rule.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Layers by folder, lowest first; the first matching prefix decides. */
const LAYERS: ReadonlyArray<{ name: string; prefixes: readonly string[] }> = [
  // The declaration tables: data that infra/ and the local runtime read as well as the handlers.
  {
    name: 'tables',
    prefixes: [
      'shared/routes.ts',
      'shared/route-docs.ts',
      'shared/grants.ts',
      'shared/workers.ts',
      'shared/deploy-tasks.ts',
    ],
  },
  { name: 'core', prefixes: ['shared/core/'] },
  { name: 'crypto', prefixes: ['shared/crypto/'] },
  { name: 'adapters', prefixes: ['shared/adapters/'] },
  { name: 'db', prefixes: ['shared/db/'] },
  // Delivery (jobs, the retry schedule, the queue they ride) is below the domain rooms that use it: webhooks, email.
  { name: 'delivery', prefixes: ['shared/domain/delivery/'] },
  { name: 'domain', prefixes: ['shared/domain/'] },
  { name: 'http', prefixes: ['shared/http/'] },
  { name: 'handlers', prefixes: ['functions/'] },
];

/** Rooms of one layer that must not import each other: [from, to] prefixes. */
const APART: ReadonlyArray<readonly [string, string]> = [
  ['shared/domain/email/', 'shared/domain/webhooks/'],
  ['shared/domain/webhooks/', 'shared/domain/email/'],
];

function layerOf(file: string): number {
  const index = LAYERS.findIndex((layer) =>
    layer.prefixes.some((prefix) => file === prefix || file.startsWith(prefix)),
  );
  if (index < 0)
    throw new Error(`${file} is in no layer: add its folder to LAYERS (and to the layers in docs/architecture.md).`);
  return index;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The project files `file` imports (relative imports, static and dynamic), as paths from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map(
    (match) => match[1],
  );
  return specifiers.map((specifier) => {
    const target = relative(ROOT, resolve(ROOT, dirname(file), specifier))
      .split('\\')
      .join('/');
    return target.endsWith('.ts') || target.endsWith('.js') ? target : `${target}.ts`;
  });
}

/**
 * Every module specifier of `file`, relative or not (imports, re-exports, dynamic imports, requires), outside
 * comments: a usage example in a header comment is no import.
 */
function specifiersOf(file: string): string[] {
  const code = readFileSync(join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"`])([^'"`]+)\1/g)].map(
    (match) => match[2],
  );
}

/** Every file under `folder`, whatever its kind. */
function allFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    return entry.isDirectory() ? allFiles(path) : [path];
  });
}

/**
 * The rooms around the service's code, each importing only from the rooms named for it (downward: the entry points
 * bin/ and bench/ use the libraries infra/, local/ and openapi/, which use shared/; nothing of these imports bin/ or
 * bench/). openapi/ builds the published contract from the handlers' schemas, so it alone of the libraries may
 * import functions/ (it loads each route's entry), and only bin/ and the tests import it: it never runs in a
 * request. shared/ and functions/ import none of them (the layers above hold that).
 */
const ROOMS: ReadonlyArray<{ room: string; imports: readonly string[] }> = [
  { room: 'infra/', imports: ['shared/'] },
  { room: 'local/', imports: ['shared/'] },
  { room: 'openapi/', imports: ['shared/', 'functions/'] },
  { room: 'bin/', imports: ['shared/', 'functions/', 'infra/', 'local/', 'openapi/'] },
  { room: 'bench/', imports: ['shared/', 'functions/', 'infra/', 'local/', 'clients/', 'test/support/'] },
];

const files = [...sourceFiles('shared'), ...sourceFiles('functions')];
const roomFiles = ROOMS.flatMap(({ room }) => sourceFiles(room.slice(0, -1)));
const everyFile = [...files, ...roomFiles];
const graph = new Map(
  everyFile.map((file) => [
    file,
    importsOf(file).map((target) =>
      everyFile.includes(target) || target.endsWith('.js') ? target : target.replace(/\.ts$/, '/index.ts'),
    ),
  ]),
);

describe('layers', () => {
  it('puts every file of shared/ and functions/ in a layer', () => {
    for (const file of files) expect(() => layerOf(file)).not.toThrow();
  });

  it('has no import from a higher layer', () => {
    const upward = [...graph]
      .filter(([file]) => files.includes(file))
      .flatMap(([file, targets]) =>
        targets
          .filter((target) => target.startsWith('shared/') || target.startsWith('functions/'))
          .filter((target) => layerOf(target) > layerOf(file))
          .map(
            (target) => `${file} (${LAYERS[layerOf(file)].name}) imports ${target} (${LAYERS[layerOf(target)].name})`,
          ),
      );

    expect(upward).toEqual([]);
  });

  it('has no import outside shared/ from shared/, and no handler imported by another file', () => {
    const outside = [...graph]
      .filter(([file]) => files.includes(file))
      .flatMap(([file, targets]) =>
        targets
          .filter((target) => !target.startsWith('shared/') || (target.startsWith('functions/') && file !== target))
          .map((target) => `${file} imports ${target}`),
      );

    expect(outside).toEqual([]);
  });

  it('has shared/core import nothing of shared/ but shared/core', () => {
    const outside = [...graph]
      .filter(([file]) => file.startsWith('shared/core/'))
      .flatMap(([file, targets]) =>
        targets.filter((target) => !target.startsWith('shared/core/')).map((target) => `${file} imports ${target}`),
      );

    expect(outside).toEqual([]);
  });

  it('keeps email and webhooks apart: each uses delivery, neither imports the other', () => {
    const crossing = [...graph].flatMap(([file, targets]) =>
      APART.filter(([from]) => file.startsWith(from)).flatMap(([, to]) =>
        targets.filter((target) => target.startsWith(to)).map((target) => `${file} imports ${target}`),
      ),
    );

    expect(crossing).toEqual([]);
  });

  it('has clients/ import nothing outside clients/: the browser adapter ships as is, without a bundler', () => {
    const code = allFiles('clients').filter((file) => /\.(?:[cm]?js|ts)$/.test(file));
    const outside = code.flatMap((file) =>
      specifiersOf(file)
        .filter(
          (specifier) =>
            !specifier.startsWith('.') ||
            !relative(ROOT, resolve(ROOT, dirname(file), specifier))
              .split('\\')
              .join('/')
              .startsWith('clients/'),
        )
        .map((specifier) => `${file} imports ${specifier}`),
    );

    expect(code).toContain('clients/live-socket.js');
    expect(outside).toEqual([]);
  });

  it('has the live framing codec import nothing of the repository (only Node built-ins), so anything may use it', () => {
    const specifiers = specifiersOf('shared/domain/live/framing.ts');

    expect(specifiers.filter((specifier) => !specifier.startsWith('node:'))).toEqual([]);
  });

  it('has infra/, local/, openapi/, bin/ and bench/ import only from the rooms below them', () => {
    const upward = roomFiles.flatMap((file) => {
      const { room, imports } = ROOMS.find((entry) => file.startsWith(entry.room)) as (typeof ROOMS)[number];
      return (graph.get(file) ?? [])
        .filter((target) => !target.startsWith(room) && !imports.some((allowed) => target.startsWith(allowed)))
        .map((target) => `${file} imports ${target}`);
    });

    expect(roomFiles).toContain('infra/stack.ts');
    expect(roomFiles).toContain('openapi/document.ts');
    expect(upward).toEqual([]);
  });

  it('has infra/ import of shared/ only the declaration tables and what they name (DESIGN: no runtime code)', () => {
    const allowed = [
      ...LAYERS[0].prefixes,
      'shared/db/table-definition.ts',
      // The names the stack's alarms watch, where the code that emits them defines them.
      'shared/core/metrics.ts',
      // Each stream reader's filter, computed where the decoder names the kinds of records.
      'shared/db/item-change.ts',
    ];
    const runtime = roomFiles
      .filter((file) => file.startsWith('infra/'))
      .flatMap((file) =>
        (graph.get(file) ?? [])
          .filter((target) => target.startsWith('shared/') && !allowed.includes(target))
          .map((target) => `${file} imports ${target}`),
      );

    expect(runtime).toEqual([]);
  });

  it('has no import cycle, in shared/, functions/, infra/, local/, openapi/, bin/ or bench/', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'visiting');
      for (const target of graph.get(file) ?? []) if (graph.has(target)) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of everyFile) visit(file, []);

    expect(cycles).toEqual([]);
  });
});
