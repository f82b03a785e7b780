/**
 * The OpenAPI 3.1 document, generated from the route table and each handler's zod schema. Loading a handler
 * module builds its clients but makes no call, so this works offline; callers must have configuration in the
 * environment (bin/openapi.ts sets placeholders, the local stack has the real values).
 */
import { join } from 'node:path';
import { routes, routeId, type AuthLevel } from '../shared/routes';
import { STATUS_BY_CODE } from '../shared/core/errors';
import * as z from 'zod/mini';

const PROJECT_ROOT = join(__dirname, '..');

const SECURITY: Record<AuthLevel, Array<Record<string, string[]>>> = {
  none: [],
  workspace: [{ workspaceId: [], workspaceAuthToken: [] }],
  apiKey: [{ apiKey: [], authToken: [] }],
};

const errorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['status', 'message'],
      properties: {
        status: { type: 'string', enum: Object.keys(STATUS_BY_CODE) },
        message: { type: 'string' },
        details: { description: 'For validation errors: `issues`, a list of `{path, message}`.' },
      },
    },
  },
};

const successEnvelope = {
  type: 'object',
  required: ['result'],
  properties: {
    result: {
      type: 'object',
      description: '`{status: "success", message, data?}`; paginated operations add `nextPageToken` or `pageToken`.',
      properties: {
        status: { type: 'string', const: 'success' },
        message: { type: 'string' },
        data: {},
        nextPageToken: { type: 'string' },
        pageToken: { type: 'string' },
      },
    },
  },
};

function jsonSchema(schema: z.ZodMiniType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/** The handler's request schema, and the schema of what it returns (`operation({ result })`). */
function handlerSchemas(entry: string): { request: unknown; result?: Record<string, unknown> } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require(join(PROJECT_ROOT, entry)) as { schema?: z.ZodMiniType; handler?: { result?: z.ZodMiniType } };
  if (!module.schema) throw new Error(`${entry} does not export its schema.`);
  const result = module.handler?.result;
  return {
    request: jsonSchema(module.schema, 'input'),
    ...(result === undefined ? {} : { result: jsonSchema(result, 'output') }),
  };
}

/**
 * The body of a success: an operation's own `{result}` (Ask AI, Suggest Decision) as it is; any other result
 * `{message, data?, <token>?}` inside the success envelope, with `status: "success"`.
 */
function successBody(result: Record<string, unknown>): Record<string, unknown> {
  const properties = (result.properties ?? {}) as Record<string, unknown>;
  if ('result' in properties) return result;
  const required = (result.required ?? []) as string[];
  return {
    type: 'object',
    required: ['result'],
    properties: {
      result: { ...result, properties: { status: { type: 'string', const: 'success' }, ...properties }, required: ['status', ...required] },
    },
    additionalProperties: false,
  };
}

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: errorEnvelope } } });

export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const route of routes) {
    const schemas = handlerSchemas(route.entry);
    paths[route.path] = {
      post: {
        operationId: routeId(route.path),
        summary: route.summary,
        security: SECURITY[route.auth],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['data'], properties: { data: schemas.request } },
            },
          },
        },
        responses: {
          '200':
            schemas.result === undefined
              ? { description: 'Success envelope.', content: { 'application/json': { schema: successEnvelope } } }
              : { description: 'Success.', content: { 'application/json': { schema: successBody(schemas.result) } } },
          '400': errorResponse('INVALID_ARGUMENT, FAILED_PRECONDITION or OUT_OF_RANGE.'),
          '401': errorResponse('UNAUTHENTICATED: credentials missing.'),
          '403': errorResponse('PERMISSION_DENIED: credentials wrong.'),
          '404': errorResponse('NOT_FOUND.'),
          '405': errorResponse('Method other than POST (status INVALID_ARGUMENT), with Allow: POST.'),
          '409': errorResponse('ALREADY_EXISTS or ABORTED.'),
          '413': errorResponse('Body over 1 MiB (status INVALID_ARGUMENT).'),
          '429': errorResponse('RESOURCE_EXHAUSTED, with Retry-After.'),
          '500': errorResponse('INTERNAL; never carries internals.'),
          '503': errorResponse('UNAVAILABLE: storage throttled, with Retry-After.'),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Collaboration backend',
      version: '2.0.0',
      description: 'Every operation is a POST with a JSON body `{"data": {...}}`. Errors use the error envelope.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-service-api-key' },
        authToken: { type: 'apiKey', in: 'header', name: 'x-service-auth-token' },
        workspaceId: { type: 'apiKey', in: 'header', name: 'x-service-workspace-id' },
        workspaceAuthToken: { type: 'apiKey', in: 'header', name: 'x-service-workspace-auth-token' },
      },
    },
    paths,
  };
}
