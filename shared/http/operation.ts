/**
 * `operation(...)` turns a handler into a Lambda handler behind the one middleware stack. A handler receives
 * validated input and its caller and returns `{message, data}`: no parsing, no status codes, no envelopes.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { withLogContext } from '../core/logger';
import type { AuthLevel } from '../routes';
import type { CallerFor } from './auth';
import type { HttpResult } from './envelope';
import {
  authentication,
  errorMapper,
  idempotency,
  jsonEnvelope,
  requestScope,
  successEnvelope,
  validation,
  type OperationEvent,
  type OperationOutput,
} from './middleware';
import type * as z from 'zod/mini';

export interface RequestInfo {
  requestId: string;
  sourceIp: string;
  path: string;
  /** The API's domain name as the caller reached it (`requestContext.domainName`; the local gateway's host:port). */
  host: string;
}

export interface OperationInput<S extends z.ZodMiniType, L extends AuthLevel> {
  data: z.output<S>;
  caller: CallerFor<L>;
  request: RequestInfo;
}

export interface OperationDefinition<S extends z.ZodMiniType, L extends AuthLevel, R extends z.ZodMiniType> {
  /** Must equal the route table's level for every path this handler serves (checked per request and by a test). */
  auth: L;
  schema: S;
  /** What `handle` returns (shared/http/results.ts): the OpenAPI document's result, and the return type here. */
  result: R;
  handle: (input: OperationInput<S, L>) => Promise<z.input<R> & OperationOutput>;
}

export type OperationHandler<
  S extends z.ZodMiniType = z.ZodMiniType,
  L extends AuthLevel = AuthLevel,
  R extends z.ZodMiniType = z.ZodMiniType,
> = ((event: OperationEvent, context: Context) => Promise<HttpResult>) & {
  readonly auth: L;
  readonly schema: S;
  readonly result: R;
};

export function operation<S extends z.ZodMiniType, L extends AuthLevel, R extends z.ZodMiniType>(
  definition: OperationDefinition<S, L, R>,
): OperationHandler<S, L, R> {
  const lambda = middy<OperationEvent, HttpResult | OperationOutput>()
    // middy runs onError middlewares in reverse order: registered first, the mapper answers last for every error.
    .use(errorMapper())
    .use(requestScope(definition.auth))
    .use(jsonEnvelope())
    .use(authentication())
    .use(idempotency())
    .use(validation(definition.schema))
    .use(successEnvelope())
    .handler(async (event: OperationEvent) => {
      const { state } = event;
      if (!state?.caller) throw new Error('Handler reached without an authenticated caller.');
      return definition.handle({
        data: state.input as z.output<S>,
        caller: state.caller as CallerFor<L>,
        request: {
          requestId: state.requestId,
          sourceIp: state.sourceIp,
          path: state.route.path,
          host: event.requestContext?.domainName ?? '',
        },
      });
    });
  // One log context per request (shared/core/logger.ts): its lines carry its keys even while others run beside it.
  return Object.assign(
    (event: OperationEvent, context: Context) =>
      withLogContext({}, () => lambda(event, context) as Promise<HttpResult>),
    {
      auth: definition.auth,
      schema: definition.schema,
      result: definition.result,
    },
  );
}
