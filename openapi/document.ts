/**
 * The OpenAPI 3.1 document, generated from the route table and each handler's zod schema. Loading a handler
 * module builds its clients but makes no call, so this works offline; callers must have configuration in the
 * environment (bin/openapi.ts sets placeholders, the local stack has the real values).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { routeDocs } from '../shared/route-docs';
import { routes, type AuthLevel, type Route, type RoutePath } from '../shared/routes';
import { STATUS_BY_CODE } from '../shared/core/errors';
import { MAX_JSON_DEPTH } from '../shared/http/middleware';
import type { ServerRule } from '../shared/http/schemas';
import * as z from 'zod/mini';

const PROJECT_ROOT = join(__dirname, '..');

/** One request and one response per operation, recorded by test/connected/openapi-examples.test.ts. */
export const EXAMPLES_FILE = join(PROJECT_ROOT, 'docs', 'openapi-examples.json');

/** An operation's example: the request's `data` and the 200 response body. */
export interface OperationExample {
  request: unknown;
  response: unknown;
}

function readExamples(): Record<string, OperationExample> {
  const examples: Record<string, OperationExample> = JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8'));
  return examples;
}

/** A media type's `examples` with the one recorded example. */
const recordedExample = (value: unknown) => ({
  examples: { recorded: { summary: 'Recorded by test/connected/openapi-examples.test.ts.', value } },
});

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

/**
 * The nesting limit (docs/decisions.md §1) as JSON Schema, which has no depth keyword: `over<k>` is a value whose
 * objects and arrays nest more than k levels (an array containing, or an object with a property holding, an
 * `over<k-1>`), and a request body is `not` one over MAX_JSON_DEPTH. openapi-typescript ignores `not`, so the client
 * types stay as they were.
 */
const NESTING = 'NestedTooDeep';
const over = (levels: number) => `#/components/schemas/${NESTING}/$defs/over${levels}`;
function nestingSchema(): Record<string, unknown> {
  const defs: Record<string, unknown> = { over0: { type: ['object', 'array'] } };
  for (let levels = 1; levels < MAX_JSON_DEPTH; levels += 1) defs[`over${levels}`] = nestedOver(levels);
  return {
    description: `JSON whose objects and arrays nest more than ${MAX_JSON_DEPTH} levels (the server refuses it).`,
    ...nestedOver(MAX_JSON_DEPTH),
    $defs: defs,
  };
}
const nestedOver = (levels: number) => ({
  anyOf: [
    { type: 'array', contains: { $ref: over(levels - 1) } },
    // Some property holds one: not every property fails to.
    { type: 'object', not: { additionalProperties: { not: { $ref: over(levels - 1) } } } },
  ],
});

/** The extensions a JSON Schema validator does not read, each with the words of the rule it states. */
const RULE_EXTENSIONS = {
  'x-uniqueItemsBy': (node: Record<string, unknown>) => [String(node.description)],
  'x-serverRules': (node: Record<string, unknown>) =>
    (node['x-serverRules'] as ServerRule[]).map((rule) => rule.description),
} as const;
type RuleExtension = keyof typeof RULE_EXTENSIONS;

/** Every rule of a request schema stated by an extension, with the extension's name. */
function rulesOf(schema: unknown): Array<{ extension: RuleExtension; words: string }> {
  if (Array.isArray(schema)) return schema.flatMap(rulesOf);
  if (schema === null || typeof schema !== 'object') return [];
  const node = schema as Record<string, unknown>;
  const own = (Object.keys(RULE_EXTENSIONS) as RuleExtension[])
    .filter((extension) => node[extension] !== undefined)
    .flatMap((extension) => RULE_EXTENSIONS[extension](node).map((words) => ({ extension, words })));
  return [...own, ...Object.entries(node).flatMap(([key, value]) => (key.startsWith('x-') ? [] : rulesOf(value)))];
}

/**
 * The description of an operation: its route's, then the rules of its request that a JSON Schema validator does
 * not check (the extensions name them for tools), so a reader of the operation alone sees them.
 */
function operationDescription(route: Route, request: unknown): string {
  const rules = rulesOf(request);
  if (rules.length === 0) return descriptionOf(route);
  const extensions = [...new Set(rules.map((rule) => `\`${rule.extension}\``))].join(', ');
  const words = [...new Set(rules.map((rule) => rule.words))].join(' ');
  return `${descriptionOf(route)}\n\nRules a JSON Schema validator does not check (stated as ${extensions}): ${words}`;
}

function jsonSchema(schema: z.ZodMiniType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

/** The handler's request schema, and the schema of what it returns (`operation({ result })`). */
function handlerSchemas(entry: string): { request: unknown; result: Record<string, unknown> } {
  const module = require(join(PROJECT_ROOT, entry)) as { schema?: z.ZodMiniType; handler?: { result?: z.ZodMiniType } };
  if (!module.schema) throw new Error(`${entry} does not export its schema.`);
  if (!module.handler?.result) throw new Error(`${entry} declares no result (operation({ result })).`);
  return { request: jsonSchema(module.schema, 'input'), result: jsonSchema(module.handler.result, 'output') };
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
      result: {
        ...result,
        properties: { status: { type: 'string', const: 'success' }, ...properties },
        required: ['status', ...required],
      },
    },
    additionalProperties: false,
  };
}

/** The error responses, as components each operation references (`#/components/responses/<name>`). */
const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
};
const ERROR_RESPONSES = {
  InvalidArgument: {
    status: '400',
    description: 'INVALID_ARGUMENT (with `details.issues`), FAILED_PRECONDITION or OUT_OF_RANGE.',
  },
  Unauthenticated: { status: '401', description: 'UNAUTHENTICATED: credentials missing.' },
  PermissionDenied: {
    status: '403',
    description: 'PERMISSION_DENIED: credentials wrong, or the operation is not allowed to them.',
  },
  NotFound: {
    status: '404',
    description: 'NOT_FOUND: a named organization, document, key or other resource does not exist.',
  },
  MethodNotAllowed: {
    status: '405',
    description: 'A method other than POST (status INVALID_ARGUMENT).',
    headers: { Allow: { description: 'POST', schema: { type: 'string' } } },
  },
  Conflict: {
    status: '409',
    description: 'ALREADY_EXISTS, or ABORTED (a conflict or an Idempotency-Key still in use; with Retry-After).',
    headers: retryAfter,
  },
  PayloadTooLarge: { status: '413', description: 'The body is over 1 MiB (status INVALID_ARGUMENT).' },
  TooManyRequests: {
    status: '429',
    description:
      'RESOURCE_EXHAUSTED: a rate limit, with Retry-After (when it lifts), or a count limit, without (no wait lifts it).',
    headers: retryAfter,
  },
  Internal: { status: '500', description: 'INTERNAL: never carries internals.' },
  Unavailable: { status: '503', description: 'UNAVAILABLE: storage throttled.', headers: retryAfter },
} as const;

type ErrorResponseName = keyof typeof ERROR_RESPONSES;

/**
 * The errors an operation can answer: every one can fail validation, a rule (403), size, limits and storage;
 * missing credentials (401) and unknown resources (404) only where credentials name a tenant.
 */
function errorsOf(auth: AuthLevel): ErrorResponseName[] {
  const tenantErrors: ErrorResponseName[] = auth === 'none' ? [] : ['Unauthenticated', 'NotFound'];
  return [
    'InvalidArgument',
    ...tenantErrors,
    'PermissionDenied',
    'MethodNotAllowed',
    'Conflict',
    'PayloadTooLarge',
    'TooManyRequests',
    'Internal',
    'Unavailable',
  ];
}

const VERBS = new Set([
  'get',
  'add',
  'update',
  'delete',
  'create',
  'reset',
  'set',
  'remove',
  'migrate',
  'suggest',
  'ask-ai',
  'rotate',
]);
const camel = (parts: string[]) =>
  parts
    .map((part, i) =>
      part
        .split('-')
        .map((word, j) => (i === 0 && j === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1)))
        .join(''),
    )
    .join('');

/** `/v2/users/get` → `getUsers`; `/v1/users/delete` → `deleteUsersV1`; a path not ending in a verb keeps its order. */
export function operationIdOf(path: string): string {
  const [version, ...segments] = path.split('/').filter(Boolean);
  const named = segments.filter((segment) => segment !== 'organizations');
  const verb = named[named.length - 1];
  const id = VERBS.has(verb) ? camel([verb, ...named.slice(0, -1)]) : camel(named);
  return version === 'v1' ? `${id}V1` : id;
}

/** docs/endpoints.md: the endpoint table, written by `npm run openapi` from the route table (no code reads it). */
export const ENDPOINTS_FILE = join(PROJECT_ROOT, 'docs', 'endpoints.md');

/** A path's link into openapi.json, from docs/ (a JSON pointer: `/` inside a key is `~1`). */
const openApiLink = (path: string) => `[\`${path}\`](../openapi.json#/paths/${path.replaceAll('/', '~1')})`;

/**
 * The endpoint table as Markdown: one row per operation in route-table order, a `/v1` alias on the row of the
 * `/v2` path it repeats, "What" from each route's `description`.
 */
export function endpointTable(): string {
  const rows = routes
    .filter((route) => !route.path.startsWith('/v1/'))
    .map((route) => {
      const alias = routes.find((other) => other.path === route.path.replace(/^\/v2\//, '/v1/'));
      const paths = [route, ...(alias ? [alias] : [])].map((entry) => openApiLink(entry.path)).join(', ');
      const extension = 'extension' in route && route.extension ? ' (ext)' : '';
      return `| ${paths}${extension} | ${route.auth} | ${descriptionOf(route)} |`;
    });
  return [
    '<!-- Generated from the route table (shared/routes.ts) by `npm run openapi`; a unit test fails when it is out of date. Do not edit by hand. -->',
    '',
    '# Endpoints',
    '',
    'Every operation is `POST` with `{"data": {...}}`. Auth: `none`, `workspace` (`x-service-workspace-id` +',
    '`x-service-workspace-auth-token`), `apiKey` (`x-service-api-key` + `x-service-auth-token`). (ext): not in',
    '[`api-spec.md`](api-spec.md), added by [`decisions.md`](decisions.md). How to call them, with examples:',
    '[`api.md`](api.md). Each path links to its operation in [`openapi.json`](../openapi.json).',
    '',
    '| Path | Auth | What |',
    '|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** The areas (tags), named after the handler folders under functions/. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  workspace:
    'Workspaces, API keys and auth tokens, the workspace-wide configurations (activity log, email, AI provider keys, advanced webhooks), the advanced webhook endpoints, messages and attempts, and the email log.',
  users: 'Users of an organization, a folder or a document, with their roles.',
  permissions: 'Grants of roles on organizations, folders and documents, optionally expiring.',
  usergroups: 'User groups of an organization and their members.',
  documents: 'Documents and folders of an organization, their access type and disabled state, and document migration.',
  notifications: "Notifications, users' feeds and per-user notification settings.",
  activities: 'Activity logs of organizations and documents.',
  crdt: 'Collaborative editor (CRDT) data: text, map, array and XML editors.',
  recordings: 'Recording annotations of documents.',
  comments:
    "Comment threads on documents, in the hosted service's comment annotations shape, anchored in editors (decisions §16).",
  rewriter: "Ask AI: rewriting text through the tenant's AI provider.",
  memory: 'Suggest Decision: a recommendation drawn from past judgments.',
};

function descriptionOf(route: Route): string {
  const description = routeDocs[route.path as RoutePath]?.description;
  if (!description) throw new Error(`shared/route-docs.ts has no description for ${route.path}.`);
  return description;
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    version: string;
    license: string;
  };
  const examples = readExamples();
  const paths: Record<string, unknown> = {};
  for (const route of routes) {
    const schemas = handlerSchemas(route.entry);
    const example = examples[route.path];
    if (example === undefined)
      throw new Error(
        `docs/openapi-examples.json has no example for ${route.path} (UPDATE_OPENAPI_EXAMPLES=1, see docs/api.md).`,
      );
    paths[route.path] = {
      post: {
        operationId: operationIdOf(route.path),
        tags: [route.entry.split('/')[1]],
        summary: routeDocs[route.path].summary,
        description: operationDescription(route, schemas.request),
        ...(route.path.startsWith('/v1/') ? { deprecated: true } : {}),
        security: SECURITY[route.auth],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['data'],
                properties: { data: schemas.request },
                not: { $ref: `#/components/schemas/${NESTING}` },
              },
              ...recordedExample({ data: example.request }),
            },
          },
        },
        responses: {
          '200': {
            description: 'Success.',
            content: {
              'application/json': { schema: successBody(schemas.result), ...recordedExample(example.response) },
            },
          },
          ...Object.fromEntries(
            errorsOf(route.auth)
              .map((name) => [ERROR_RESPONSES[name].status, { $ref: `#/components/responses/${name}` }] as const)
              .sort(([a], [b]) => a.localeCompare(b)),
          ),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Collaboration backend',
      version: pkg.version,
      license: { name: pkg.license, identifier: pkg.license },
      description: 'Every operation is a POST with a JSON body `{"data": {...}}`. Errors use the error envelope.',
    },
    servers: [
      { url: 'http://localhost:3000', description: 'The local stack (`npm start`).' },
      {
        url: 'https://{apiId}.execute-api.{region}.amazonaws.com',
        description: 'A deployed stack (the ApiUrl output of `cdk deploy`).',
        variables: { apiId: { default: 'your-api-id' }, region: { default: 'us-east-1' } },
      },
    ],
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    tags: [...new Set(routes.map((route) => route.entry.split('/')[1]))].map((name) => {
      const description = TAG_DESCRIPTIONS[name];
      if (description === undefined) throw new Error(`No description for the area ${name} (TAG_DESCRIPTIONS).`);
      return { name, description };
    }),
    components: {
      schemas: { ErrorEnvelope: errorEnvelope, [NESTING]: nestingSchema() },
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map(([name, response]) => [
          name,
          {
            description: response.description,
            ...('headers' in response ? { headers: response.headers } : {}),
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          },
        ]),
      ),
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
