/**
 * The published contract is no looser than the server (issue #22): for every operation, request bodies generated
 * from openapi.json's own request schema (each checked against the document by a JSON Schema validator before it
 * is sent) pass the server's validation. A body the document allows may still fail on what is stored (a page
 * token, a stored editor's type), on the clock, or on what JSON Schema cannot express (two values compared, content
 * that must parse); those answers are listed below by message, and no others may be INVALID_ARGUMENT.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { routes, type Route } from '../../shared/routes';
import { invokeRoute } from '../support/invoke';
import { newTenant, type Tenant } from '../support/fixtures';
import { arbitraryFor, type JsonSchema } from '../support/schema-arbitrary';

/** Enough bodies to reach each operation's branches and optional fields, few enough to stay quick. */
const BODIES_PER_ROUTE = 10;
/** Fixed, so a failure can be replayed; change it to explore other bodies. */
const SEED = 20260522;

/**
 * INVALID_ARGUMENT answers the document cannot state, matched against each issue's message (or the whole message
 * of an answer without issues). Everything else a valid body meets must be in the document.
 */
const NOT_IN_THE_DOCUMENT: RegExp[] = [
  // What is stored: a page token comes from an earlier page; an update without `type` keeps the editor's type.
  /^Invalid page token\.$/,
  /^Data must be .+: this editor was created with type \w+\.$/,
  // The clock: an expiry in the future, a recovery window of the last 14 days.
  /^Must be in the future \(Unix seconds\)\.$/,
  /^since must be at most 14 days ago\.$/,
  // Two values compared (JSON Schema compares a value with constants only).
  /^Must differ from documentId\.$/,
  /^until must not be before since\.$/,
  // Content a schema cannot parse: a Yjs update that must decode, XML that must parse.
  /^yjsUpdate must be a base64-encoded Yjs update\.$/,
  /^Data is not valid XML: /,
  // ProseMirror JSON whose nodes, marks and attributes must fit the schema of decisions §15 (as XML must parse).
  /^Content is not valid ProseMirror JSON: /,
  /^Content is not valid: /,
  // A public key must encrypt (the probe): a pattern cannot tell an RSA modulus from an even number.
  /^Cannot encrypt with this key: /,
];

const document = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as {
  paths: Record<
    string,
    { post: { requestBody: { content: { 'application/json': { schema: { properties: { data: JsonSchema } } } } } } }
  >;
};
const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
addFormats(ajv);
ajv.addSchema(document as object, 'openapi.json');

const pointer = (path: string) =>
  `openapi.json#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema/properties/data`;
const requestSchema = (route: Route) =>
  document.paths[route.path].post.requestBody.content['application/json'].schema.properties.data;

let tenant: Tenant;

function headersFor(route: Route): Record<string, string> {
  if (route.auth === 'apiKey') return tenant.apiKeyHeaders;
  if (route.auth === 'workspace') return tenant.workspaceHeaders;
  return {};
}

function onlyWhatTheDocumentCannotSay(error: {
  message: string;
  details?: { issues?: Array<{ message: string }> };
}): boolean {
  const messages = error.details?.issues?.map((issue) => issue.message) ?? [error.message];
  return messages.every((message) => NOT_IN_THE_DOCUMENT.some((pattern) => pattern.test(message)));
}

beforeAll(async () => {
  tenant = await newTenant();
});

describe('keys a request schema does not name', () => {
  it('are dropped whatever they hold, numbers DynamoDB could not store included', async () => {
    const response = await invokeRoute(
      '/v2/workspace/activityconfig/get',
      { x: 1e16, y: { z: [1e-200, -(2 ** 60)] } },
      { headers: tenant.apiKeyHeaders },
    );

    expect(response.statusCode).toBe(200);
  });
});

describe('bodies the published document allows', () => {
  it.each(routes.map((route) => [route.path, route] as const))(
    '%s: never INVALID_ARGUMENT for a valid body',
    async (_, route) => {
      const validate = ajv.getSchema(pointer(route.path));
      if (validate === undefined) throw new Error(`No request schema for ${route.path}.`);
      const valid = arbitraryFor(requestSchema(route), { root: document, extraKeys: true }).filter(
        (data) => validate(data) === true,
      );
      const bodies = fc.sample(valid, { numRuns: BODIES_PER_ROUTE, seed: SEED });

      const answers = await Promise.all(
        bodies.map(async (data) => {
          const response = await invokeRoute(route.path, data, { headers: headersFor(route) });
          return { data, error: response.body.error };
        }),
      );
      const refused = answers
        .filter(({ error }) => error?.status === 'INVALID_ARGUMENT' && !onlyWhatTheDocumentCannotSay(error))
        .map(({ data, error }) => ({
          body: JSON.stringify(data).slice(0, 400),
          message: error?.message,
          issues: JSON.stringify(error?.details?.issues ?? []).slice(0, 400),
        }));

      expect(bodies).toHaveLength(BODIES_PER_ROUTE);
      expect(refused).toEqual([]);
    },
  );
});
