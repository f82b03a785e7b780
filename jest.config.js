/**
 * Four tiers (see docs/design.md): unit (no I/O), connected (handlers through the real middleware against DynamoDB
 * Local, one table per test file), infra (CDK template and cdk-nag), e2e (the local stack over HTTP); and the
 * example application (examples/editor) in headless Chromium (browser).
 */
// Every Java process of a run is DynamoDB Local: two or three per connected worker (test/support/connected-environment.ts),
// and one in each local stack a test starts (the e2e tier's, the restart and lifecycle tests', the browser tests'),
// about thirty in all. Most live for seconds, where the JVM's optimizing compiler (C2) and parallel collector cost more CPU
// than they return: with C1 only and the serial collector a stack is ready in half the time on a busy 2-core machine
// (java's CPU at startup 4.5 s -> 2.3 s), and bounded-reads, the tier's heaviest user of DynamoDB Local, takes a third
// less CPU (32.7 -> 20.7 s). DynamoDB Local behaves the same; a JAVA_TOOL_OPTIONS of the developer's own is kept. Set
// here, before the global setups start java, so that every process of the run inherits it.
process.env.JAVA_TOOL_OPTIONS ??= '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

// Temporary folders in memory (tmpfs) where the machine has one: the data folders of the stacks the e2e and browser
// tests start (DynamoDB Local's database, the file queue), the connected tier's queues and mailboxes. Those tests kill
// processes (kill -9, SIGTERM), never the machine, and a killed process cannot tell a file in the page cache from one
// in tmpfs: both outlive it. What they prove is the same, but the flushes to disk no longer cost: the webhook restart
// test, whose stack writes some 30,000 items and 4,000 queue files, made its 1,000 messages in 29 s instead of 73 s,
// and the live restart test took 55 s instead of 78 s. A TMPDIR of the developer's own is kept.
const MEMORY_FOLDER = '/dev/shm';
if (process.env.TMPDIR === undefined && isWritableFolder(MEMORY_FOLDER)) process.env.TMPDIR = MEMORY_FOLDER;

function isWritableFolder(folder) {
  const { accessSync, constants, statSync } = require('node:fs');
  try {
    accessSync(folder, constants.W_OK);
    return statSync(folder).isDirectory();
  } catch {
    return false;
  }
}

const transform = {
  // Transpile only: the type check is `npm run typecheck`. @middy/core and request-filtering-agent ship ESM only, so
  // they are transformed too; so are the ESM-only packages under linkedom (the formats' DOM: css-select, cssomnom and
  // what css-select brings), which Node's require loads but Jest's module system does not.
  '^.+\\.[tj]s$': [
    'ts-jest',
    { tsconfig: { module: 'commonjs', moduleResolution: 'node10', allowJs: true, isolatedModules: true } },
  ],
};
const common = {
  transform,
  // Yjs loaded twice in one test file fails it (the module says why).
  setupFilesAfterEnv: ['<rootDir>/test/support/one-yjs.ts'],
  transformIgnorePatterns: [
    '/node_modules/(?!(@middy|request-filtering-agent|css-select|css-what|cssomnom|nth-check|boolbase|domhandler|domutils|dom-serializer|domelementtype|entities)/)',
  ],
  testEnvironment: 'node',
};

module.exports = {
  // A ceiling, not a budget (issue 22): tests wait for conditions (test/support/wait.ts, whose ceiling is below this
  // one), so a quiet machine never comes near it and a machine three times slower still passes.
  testTimeout: 300_000,
  // Three workers on two cores: two workers left a third of the CPU idle, each often waiting on something other than
  // its own CPU (a stack it started, a retry, a receiver, DynamoDB Local), and a third worker fills those waits. Measured on the 2-core
  // machine, the whole suite: 2 workers 437 s (CPU 67 % used), 3 workers 349 s (75 %), 4 workers 378 s. Each
  // connected file has a table of its own on its worker's DynamoDB Local and the e2e files share one stack, so files
  // run side by side safely. (A number: Jest reads a percentage above 100 % as a count of workers.)
  maxWorkers: Math.max(2, Math.floor(require('node:os').cpus().length * 1.5)),
  // The slowest files start first, in a fresh clone too, so that the workers finish together (the module says how).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/unit-global-setup.ts',
      setupFiles: ['<rootDir>/test/support/unit-env.ts'],
    },
    {
      ...common,
      displayName: 'connected',
      testMatch: ['<rootDir>/test/connected/**/*.test.ts'],
      // Node's, with a DynamoDB Local fresh for every third file of a worker (the module says why).
      testEnvironment: '<rootDir>/test/support/connected-environment.ts',
      globalSetup: '<rootDir>/test/support/dynamodb-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/dynamodb-global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/table-per-file.ts'],
      setupFilesAfterEnv: [
        ...common.setupFilesAfterEnv,
        '<rootDir>/test/support/internal-errors.ts',
        '<rootDir>/test/support/grant-check-setup.ts',
        '<rootDir>/test/support/create-table.ts',
      ],
    },
    { ...common, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/local-stack-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/local-stack-global-teardown.ts',
    },
    // The example application (examples/editor) in headless Chromium; each file starts its own local stack.
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.test.ts'] },
  ],
};
