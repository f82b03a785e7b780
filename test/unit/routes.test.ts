import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { routes, socketRoutes } from '../../shared/routes';
import { queueWorkers, scheduledWorkers, workers } from '../../shared/workers';
import { deployTasks } from '../../shared/deploy-tasks';
import type { AccessDeclaration } from '../../shared/grants';
import { GLOBAL_INDEXES } from '../../shared/db/table-definition';

const root = join(__dirname, '..', '..');
// Files under functions/ that are not operations: the gateway's fallback, the workers, the deploy tasks.
const NOT_OPERATIONS = [/^functions\/gateway\//, /^functions\/workers\//, /^functions\/deploy\//];

function handlerFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return handlerFiles(path);
    return name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

describe('the route table', () => {
  it('has a handler file for every route', () => {
    const missing = routes.filter((route) => !existsSync(join(root, route.entry))).map((route) => route.entry);

    expect(missing).toEqual([]);
  });

  it('has a route for every handler file', () => {
    // The live-sync WebSocket API's handlers are routes too (of that API).
    const routed = new Set<string>([...routes, ...socketRoutes].map((route) => route.entry));
    const unrouted = handlerFiles(join(root, 'functions'))
      .filter((file) => !NOT_OPERATIONS.some((pattern) => pattern.test(file)))
      .filter((file) => !routed.has(file));

    expect(unrouted).toEqual([]);
  });

  it('lists each path once, as a POST path under /v1 or /v2', () => {
    const paths = routes.map((route) => route.path);

    expect(new Set(paths).size).toBe(paths.length);
    for (const path of paths) expect(path).toMatch(/^\/v[12]\/[a-z0-9/-]+$/);
  });

  it.each(routes.map((route) => [route.path, route] as const))(
    '%s: its handler was built for the route’s auth level',
    (_, route) => {
      const module = require(join(root, route.entry)) as { handler?: { auth?: string; schema?: unknown } };

      expect(typeof module.handler).toBe('function');
      expect(module.handler?.auth).toBe(route.auth);
      expect(module.handler?.schema).toBeDefined();
    },
  );
});

describe('the socket route table', () => {
  it.each(socketRoutes.map((route) => [route.routeKey, route] as const))(
    '%s: its handler file exports a handler',
    (_, route) => {
      expect(typeof (require(join(root, route.entry)) as { handler?: unknown }).handler).toBe('function');
    },
  );

  it('has one route per route key', () => {
    expect(new Set(socketRoutes.map((route) => route.routeKey)).size).toBe(socketRoutes.length);
  });
});

describe.each([
  ['worker', 'workers', [...workers, ...queueWorkers, ...scheduledWorkers]],
  ['deploy-task', 'deploy', deployTasks],
] as const)('the %s table', (_, folder, table) => {
  it(`names every file under functions/${folder}, each exporting a handler`, () => {
    const files = handlerFiles(join(root, 'functions', folder)).sort();

    expect(table.map((entry) => entry.entry).sort()).toEqual(files);
    for (const entry of table) {
      expect(typeof (require(join(root, entry.entry)) as { handler?: unknown }).handler).toBe('function');
    }
  });
});

describe('the declared indexes', () => {
  const entries: Array<readonly [string, AccessDeclaration]> = [
    ...routes.map((route) => [route.path, route] as const),
    ...socketRoutes.map((route) => [route.routeKey, route] as const),
    ...[...workers, ...queueWorkers, ...scheduledWorkers].map((worker) => [worker.id, worker] as const),
  ];

  it.each(entries)('%s: names only indexes the table has, each once', (_, entry) => {
    const indexes: readonly string[] = entry.indexes ?? [];
    const known = GLOBAL_INDEXES.map((index) => index.name);

    expect(indexes.filter((index) => !known.includes(index))).toEqual([]);
    expect(new Set(indexes).size).toBe(indexes.length);
  });
});

/** The project files `entry` reaches through its relative imports (static `from '...'` and dynamic `import('...')`). */
function reachableFiles(entry: string): Set<string> {
  const importsOf = (file: string): string[] => {
    const text = readFileSync(join(root, file), 'utf8');
    return [...text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((match) => {
      const target = relative(root, resolve(root, dirname(file), match[1]))
        .split('\\')
        .join('/');
      return target.endsWith('.ts') ? target : `${target}.ts`;
    });
  };
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file) || !existsSync(join(root, file))) continue;
    seen.add(file);
    pending.push(...importsOf(file));
  }
  return seen;
}

type DeclaredEntry = AccessDeclaration & { entry: string };

const functionEntries: Array<readonly [string, DeclaredEntry]> = [
  ...routes.map((route) => [route.path, route] as const),
  ...socketRoutes.map((route) => [route.routeKey, route] as const),
  ...[...workers, ...queueWorkers, ...scheduledWorkers].map((worker) => [worker.id, worker] as const),
];

/**
 * The delivery queue has no local IAM to refuse a send (the file queue stands in for SQS), so the grant is proven
 * from the code instead: a function whose handler can reach shared/adapters/queue/delivery-queue.ts through its imports must
 * declare `queue: 'send'` (else SQS would refuse it in AWS), and one that declares it must reach it (least
 * privilege).
 */
describe('the delivery queue grant', () => {
  const QUEUE_MODULE = 'shared/adapters/queue/delivery-queue.ts';

  it.each(functionEntries)('%s: declares queue send exactly when its handler can send to the queue', (_, entry) => {
    expect(entry.queue === 'send').toBe(reachableFiles(entry.entry).has(QUEUE_MODULE));
  });
});

/**
 * SES, like the queue, is never called on the local stack (the mailbox stands in for it), so its grant is proven from
 * the code too: a function whose handler can reach shared/adapters/email/ses-transport.ts must declare `ses: 'send'` (else SES
 * would refuse the send in AWS), and one that declares it must reach it (least privilege).
 */
describe('the SES grant', () => {
  const SES_MODULE = 'shared/adapters/email/ses-transport.ts';
  const entries: Array<readonly [string, DeclaredEntry]> = [
    ...functionEntries,
    ...deployTasks.map((task) => [task.id, task] as const),
  ];

  it('looks for a transport module that exists', () => {
    expect(existsSync(join(root, SES_MODULE))).toBe(true);
  });

  it.each(entries)('%s: declares ses send exactly when its handler can send through SES', (_, entry) => {
    expect(entry.ses === 'send').toBe(reachableFiles(entry.entry).has(SES_MODULE));
  });
});
