/**
 * The grant check: DynamoDB Local and the local KMS stand-in enforce no IAM, so a read-only route that writes
 * would pass every local test and fail with AccessDenied on its first request in AWS. While a handler runs under
 * the check, every command it sends through the service's DynamoDB and KMS clients is held against the grants its
 * route (or worker, or deploy task) declares, derived by shared/grants.ts exactly as the CDK stack derives the
 * function's IAM policy. A command outside them is refused the way AWS refuses it (AccessDeniedException) and
 * recorded with the route, the command and the missing grant.
 *
 * The connected tests run every handler under it and fail a test that leaves a violation; the local stack
 * (`npm start`, and so the e2e tier) runs every route and worker under it too.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { MiddlewareStack } from '@smithy/types';
import type { DeployTask } from '../shared/deploy-tasks';
import {
  CONNECTIONS_MANAGE_ACTION,
  IDEMPOTENCY_KEY_PREFIX,
  NO_GRANTS,
  grantsFor,
  routeGrants,
  type Grants,
} from '../shared/grants';
import { findRoute, type SocketRoute } from '../shared/routes';
import type { QueueWorker, ScheduledWorker, StreamConsumer, Worker } from '../shared/workers';

/** One permission a command needs: an IAM action on the table, one of its indexes, or the key. */
export interface Permission {
  readonly action: string;
  /** `table`, `index/<name>`, `key`, or `table <name>` for a table that is not the service's. */
  readonly resource: string;
  /** The item's partition key, for single-item commands (IAM's `dynamodb:LeadingKeys`). */
  readonly partitionKey?: string;
}

export interface Violation {
  /** Who sent it: `POST <path>`, `worker <id>`, `deploy task <id>`. */
  readonly caller: string;
  readonly command: string;
  readonly missing: readonly Permission[];
}

interface Scope {
  readonly caller: string;
  readonly grants: Grants;
  /** Where the commands that succeeded in this scope are listed (`dynamodb:PutItem`), when someone asked. */
  readonly recorder?: string[];
}

const scopes = new AsyncLocalStorage<Scope>();
const violations: Violation[] = [];
const watched = new WeakSet<object>();
let tableName: string | undefined;
let report: ((violation: Violation) => void) | undefined;

/** The error AWS answers a command the role may not send with; handlers see it as they would in AWS. */
export class AccessDeniedException extends Error {
  override readonly name = 'AccessDeniedException';
  readonly $fault = 'client';
}

/** An AWS SDK v3 client: the check adds one middleware to its stack. */
export interface WatchedClient<Input extends object, Output extends object> {
  readonly middlewareStack: MiddlewareStack<Input, Output>;
}

/**
 * Watches the clients' commands (once per client). `table` is the service's table: commands on any other table
 * need grants no function has. `onViolation` is told of each violation as it happens (the local stack logs it).
 */
export function installGrantCheck<DI extends object, DO extends object, KI extends object, KO extends object>(options: {
  dynamodb: WatchedClient<DI, DO>;
  kms: WatchedClient<KI, KO>;
  table: string;
  onViolation?: (violation: Violation) => void;
}): void {
  tableName = options.table;
  report = options.onViolation;
  watch(options.dynamodb, 'dynamodb');
  watch(options.kms, 'kms');
}

/**
 * Watches the live connections' Management API client (shared/adapters/live/management-api.ts): every command it sends
 * needs `execute-api:ManageConnections`, which IAM grants on the WebSocket API's stage only to the functions that
 * declare `connections: 'manage'`.
 */
export function watchConnectionsClient<I extends object, O extends object>(client: WatchedClient<I, O>): void {
  watch(client, 'execute-api');
}

function watch<Input extends object, Output extends object>(
  client: WatchedClient<Input, Output>,
  service: 'dynamodb' | 'kms' | 'execute-api',
): void {
  if (watched.has(client)) return;
  watched.add(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const scope = scopes.getStore();
      if (scope !== undefined) {
        const command = String((context as { commandName?: string }).commandName ?? 'UnknownCommand').replace(
          /Command$/,
          '',
        );
        const needed =
          service === 'kms'
            ? [{ action: `kms:${command}`, resource: 'key' }]
            : service === 'execute-api'
              ? [{ action: CONNECTIONS_MANAGE_ACTION, resource: 'connections' }]
              : dynamodbPermissions(command, args.input as DynamoDbInput);
        const missing = needed.filter((permission) => !isGranted(scope.grants, permission));
        if (missing.length > 0) {
          const violation: Violation = { caller: scope.caller, command: `${service}:${command}`, missing };
          violations.push(violation);
          report?.(violation);
          throw new AccessDeniedException(describeViolation(violation));
        }
      }
      const output = await next(args);
      if (scope?.recorder !== undefined) {
        scope.recorder.push(
          `${service}:${String((context as { commandName?: string }).commandName ?? 'UnknownCommand').replace(/Command$/, '')}`,
        );
      }
      return output;
    },
    { step: 'initialize', name: 'grantCheck', priority: 'high' },
  );
}

/** What the check reads of a DynamoDB command's input (marshalled or not, these fields are the same). */
interface DynamoDbInput {
  TableName?: string;
  IndexName?: string;
  Key?: Record<string, unknown>;
  Item?: Record<string, unknown>;
  RequestItems?: Record<string, unknown>;
  TransactItems?: Array<Record<string, { TableName?: string } | undefined>>;
}

/** How IAM authorizes each item of a TransactWriteItems / TransactGetItems. */
const TRANSACT_ITEM_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Get: 'dynamodb:GetItem',
};

/** The permissions IAM checks for one DynamoDB command (the action named after the operation, on its table or index). */
export function dynamodbPermissions(command: string, input: DynamoDbInput): Permission[] {
  if (command === 'TransactWriteItems' || command === 'TransactGetItems') {
    return (input.TransactItems ?? []).flatMap((item) =>
      Object.entries(item).map(([kind, operation]) => ({
        action: TRANSACT_ITEM_ACTIONS[kind] ?? `dynamodb:${kind}`,
        resource: resourceOf(operation?.TableName),
      })),
    );
  }
  if (command === 'BatchGetItem' || command === 'BatchWriteItem') {
    return Object.keys(input.RequestItems ?? {}).map((table) => ({
      action: `dynamodb:${command}`,
      resource: resourceOf(table),
    }));
  }
  const resource = resourceOf(input.TableName);
  const partitionKey = stringValue((input.Key ?? input.Item)?.pk);
  return [
    {
      action: `dynamodb:${command}`,
      resource: input.IndexName !== undefined && resource === 'table' ? `index/${input.IndexName}` : resource,
      ...(partitionKey === undefined ? {} : { partitionKey }),
    },
  ];
}

/** A key attribute as the document client (`'x'`) or the low-level client (`{S: 'x'}`) sends it. */
function stringValue(attribute: unknown): string | undefined {
  if (typeof attribute === 'string') return attribute;
  if (attribute !== null && typeof attribute === 'object' && typeof (attribute as { S?: unknown }).S === 'string')
    return (attribute as { S: string }).S;
  return undefined;
}

function resourceOf(table: string | undefined): string {
  return table !== undefined && table === tableName ? 'table' : `table ${table ?? '?'}`;
}

function isGranted(grants: Grants, permission: Permission): boolean {
  if (permission.resource === 'table') {
    if (grants.tableActions.includes(permission.action)) return true;
    // The idempotency records: IAM's dynamodb:LeadingKeys condition on the partition key.
    return (
      grants.idempotencyActions.includes(permission.action) &&
      permission.partitionKey?.startsWith(IDEMPOTENCY_KEY_PREFIX) === true
    );
  }
  if (permission.resource === 'key') return grants.kmsActions.includes(permission.action);
  if (permission.resource === 'connections') return grants.connectionActions.includes(permission.action);
  if (permission.resource.startsWith('index/')) {
    return (
      permission.action === 'dynamodb:Query' && grants.indexes.includes(permission.resource.slice('index/'.length))
    );
  }
  return false;
}

export function describeViolation(violation: Violation): string {
  const missing = violation.missing.map((permission) => `${permission.action} on ${permission.resource}`).join(', ');
  return `Grant check: ${violation.caller} sent ${violation.command}, which needs ${missing}: not granted to it (shared/grants.ts derives its grants from its table entry).`;
}

/**
 * Runs `fn` (a handler call) as the function of `caller`, holding every command it sends to `grants`. A recorder of
 * an enclosing `recordCommands` keeps listing what succeeds.
 */
export function runWithGrants<T>(caller: string, grants: Grants, fn: () => T): T {
  return scopes.run({ caller, grants, recorder: scopes.getStore()?.recorder }, fn);
}

/**
 * Runs `fn` (which calls handlers, each under its own grants) and lists in `log` every DynamoDB and KMS command
 * that succeeded while it ran, e.g. to show that a refused request wrote nothing.
 */
export function recordCommands<T>(log: string[], fn: () => T): T {
  return scopes.run({ caller: 'outside any function', grants: NO_GRANTS, recorder: log }, fn);
}

/** Runs `fn` as the function of the route at `path`; a path with no route has no grants at all. */
export function runAsRoute<T>(path: string, fn: () => T): T {
  const route = findRoute(path);
  return runWithGrants(`POST ${path}`, route === undefined ? NO_GRANTS : routeGrants(route), fn);
}

/** Runs `fn` as the function of a route of the live WebSocket API. */
export function runAsSocketRoute<T>(route: SocketRoute, fn: () => T): T {
  return runWithGrants(`WebSocket ${route.routeKey}`, grantsFor(route), fn);
}

export function runAsWorker<T>(worker: Worker | StreamConsumer | QueueWorker | ScheduledWorker, fn: () => T): T {
  return runWithGrants(`worker ${worker.id}`, grantsFor(worker), fn);
}

export function runAsDeployTask<T>(task: DeployTask, fn: () => T): T {
  return runWithGrants(`deploy task ${task.id}`, grantsFor(task), fn);
}

/** The violations since the last call, and forgets them. */
export function takeViolations(): Violation[] {
  return violations.splice(0, violations.length);
}
