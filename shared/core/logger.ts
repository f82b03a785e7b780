/**
 * The structured JSON logger (Powertools), one per process, and the keys that say which request or job a line
 * belongs to. Those keys live in an asynchronous context (node:async_hooks), one per request or job:
 * `withLogContext` opens one (`operation` for each request, each worker for each job), `logger.appendKeys` adds to
 * it, and every line written inside it, across every await, carries its keys and no other's. The local stack runs
 * many requests and worker jobs at once in one process, where keys held by the logger itself would put one
 * request's id and path on another's lines; a Lambda function runs one request at a time, where a context per
 * request is what resetting the keys per request was. (Powertools scopes its own keys per invocation only under
 * Lambda's concurrent runtime, AWS_LAMBDA_MAX_CONCURRENCY with the runtime's InvokeStore, which the local stack is not.)
 * Never log request bodies, headers or secrets: log ids and outcomes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, LogItemExtraInput, LogLevel } from '@aws-lambda-powertools/logger/types';

const powertools = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'collab-backend' });

/** The keys of the request or job running in the current asynchronous context. */
const contextKeys = new AsyncLocalStorage<LogAttributes>();

/**
 * Runs `work` in a log context of its own, starting with `keys`. It never inherits the keys of the context it is
 * opened in: a job started while a request runs is not that request's.
 */
export function withLogContext<T>(keys: LogAttributes, work: () => T): T {
  return contextKeys.run({ ...keys }, work);
}

type Level = 'debug' | 'info' | 'warn' | 'error';

/** A Powertools method that writes the current context's keys first, so that a line's own attributes win a clash. */
function withContextKeys(level: Level): (message: string, ...extra: LogItemExtraInput) => void {
  return (message, ...extra) => {
    const keys = contextKeys.getStore();
    powertools[level](keys === undefined ? message : { ...keys, message }, ...extra);
  };
}

export const logger = {
  debug: withContextKeys('debug'),
  info: withContextKeys('info'),
  warn: withContextKeys('warn'),
  error: withContextKeys('error'),
  /**
   * Adds keys to every later line of the current request or job. Throws outside one: keys with no context to hold
   * them would be the process's, on every concurrent request's lines.
   */
  appendKeys(keys: LogAttributes): void {
    const current = contextKeys.getStore();
    if (current === undefined)
      throw new Error('logger.appendKeys outside a log context: open one with withLogContext.');
    Object.assign(current, keys);
  },
  setLogLevel(level: LogLevel): void {
    powertools.setLogLevel(level);
  },
};
