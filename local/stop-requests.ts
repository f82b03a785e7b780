/**
 * How `npm start` learns that it must stop: SIGINT, SIGTERM, or the process that started it going away.
 *
 * A process manager (systemd, a container runtime, a CI step) stops a service by signalling the one process it
 * started, `npm start`; npm forwards SIGINT and SIGTERM to its child, which is this process (the start script
 * `exec`s node, so no shell sits in between to swallow them). When npm itself is killed with SIGKILL nothing is
 * forwarded, and this process would be left running, holding its port, with no one to stop it: a changed parent pid
 * means exactly that, so it counts as a request to stop too.
 *
 * This module imports nothing heavy on purpose: bin/local.ts calls it first, before the stack's modules load (which
 * takes seconds on a busy machine), so a signal that arrives during startup reaches a handler instead of Node's
 * default action (exit 143 with DynamoDB Local left to the kernel).
 */

/** How often the parent pid is compared with the one at start. */
const PARENT_CHECK_MS = 250;

export interface StopRequestHandlers {
  /** The first request, with what it was ("SIGTERM", "SIGINT", "parent process exited"). */
  onStop(reason: string): void;
  /** A later SIGINT or SIGTERM (a second Ctrl-C): the caller should leave at once. */
  onRepeat(reason: string): void;
}

export function watchStopRequests(handlers: StopRequestHandlers): void {
  let requested = false;
  const request = (reason: string): void => {
    if (requested) {
      handlers.onRepeat(reason);
      return;
    }
    requested = true;
    handlers.onStop(reason);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => request(signal));

  const parent = process.ppid;
  // Started by init (pid 1, as in some containers) there is no parent to lose.
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    request('parent process exited');
  }, PARENT_CHECK_MS);
  // The stack's own servers keep the process alive; this check alone must not.
  timer.unref();
}
