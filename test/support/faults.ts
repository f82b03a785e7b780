/**
 * Fault injection for the connected tier: makes one chosen DynamoDB command fail the way the service fails
 * (InternalServerError, which the SDK does not retry once it reaches our code), so a test can stop a write in
 * several steps between two of them and look at what is stored. DynamoDB Local never fails on its own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { dynamodb } from '../../shared/db/client';

export interface Fault {
  /** The DynamoDB operation, e.g. `TransactWriteItems`, `BatchWriteItem`. */
  command: string;
  /** Which of the operation's calls fails (1 = the first) while the scope runs. */
  nth: number;
}

/** DynamoDB's 500: what a command that fails on the service's side throws. */
export class InternalServerError extends Error {
  override readonly name = 'InternalServerError';
  readonly $fault = 'server';
}

interface Scope {
  fault: Fault;
  seen: number;
}

const scopes = new AsyncLocalStorage<Scope>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      const scope = scopes.getStore();
      const command = String((context as { commandName?: string }).commandName ?? '').replace(/Command$/, '');
      if (scope !== undefined && command === scope.fault.command) {
        scope.seen += 1;
        if (scope.seen === scope.fault.nth)
          throw new InternalServerError(`Injected fault: ${command} call ${scope.fault.nth} failed.`);
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectedFault', priority: 'high' },
  );
}

/** Runs `fn` with `fault` armed: the nth call of the command inside it fails. */
export function withFault<T>(fault: Fault, fn: () => Promise<T>): Promise<T> {
  install();
  return scopes.run({ fault, seen: 0 }, fn);
}
