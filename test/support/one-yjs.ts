/**
 * Fails a test file in which Yjs was loaded twice. Yjs says so only on the console ("Yjs was already imported"),
 * and two copies break its constructor checks (`struct instanceof GC`) and with them the CRDT algorithm, so in the
 * tests that message is an error: of a test that restarts the service's modules in one process, or of a CommonJS and
 * an ES module copy side by side (https://github.com/yjs/yjs/issues/438).
 */
const YJS_TWICE = 'Yjs was already imported';
const seen: string[] = [];
const consoleError = console.error.bind(console);

console.error = (...args: unknown[]) => {
  if (args.some((arg) => typeof arg === 'string' && arg.includes(YJS_TWICE)))
    seen.push(new Error(YJS_TWICE).stack ?? YJS_TWICE);
  consoleError(...args);
};

afterAll(() => {
  if (seen.length > 0)
    throw new Error(`Yjs was loaded twice in this test file; one copy must be loaded. Where:\n${seen[0]}`);
});
