/**
 * Calls any operation by its path, in process, through its real handler and middleware (the route table names
 * the handler file). Suites that drive many operations use this instead of importing each handler.
 */
import { join } from 'node:path';
import { findRoute } from '../../shared/routes';
import { invoke, type Invocation, type InvokeOptions } from './invoke';

type Handler = Parameters<typeof invoke>[0];

export type CallRoute = (path: string, data: unknown, headers: Record<string, string>, options?: Omit<InvokeOptions, 'headers'>) => Promise<Invocation>;

const root = join(__dirname, '..', '..');

export const callRoute: CallRoute = (path, data, headers, options = {}) => {
  const route = findRoute(path);
  if (route === undefined) throw new Error(`No route ${path}.`);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { handler } = require(join(root, route.entry)) as { handler: Handler };
  return invoke(handler, path, data, { ...options, headers });
};
