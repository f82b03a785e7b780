/**
 * The contract check: every response a test receives is validated against the committed OpenAPI document
 * (`openapi.json`, written by `npm run openapi`; test/unit/openapi.test.ts fails when it is stale) with Ajv's
 * JSON Schema 2020-12 validator. A response whose status the operation does not document, or whose body does not
 * match that status's schema, throws with the path, the status and what differs, failing the test that called.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}

const document = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as {
  paths: Record<string, { post: Operation }>;
};

/** `value` with every `{"$ref": "#/..."}` replaced by what it points to (the document has no recursive refs). */
function dereferenced(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dereferenced);
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document);
    return dereferenced(target);
  }
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, dereferenced(inner)]));
}
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validators = new Map<string, ValidateFunction>();

function validatorFor(path: string, status: number): ValidateFunction | undefined {
  const key = `${path} ${status}`;
  const known = validators.get(key);
  if (known !== undefined) return known;
  const response = dereferenced(document.paths[path]?.post.responses[String(status)]) as
    Operation['responses'][string] | undefined;
  const schema = response?.content?.['application/json']?.schema;
  if (schema === undefined) return undefined;
  const validate = ajv.compile(schema);
  validators.set(key, validate);
  return validate;
}

/** Throws when `body` (answered with `status` at `path`) is not what the document says; paths it lacks are not checked. */
export function checkResponse(path: string, status: number, body: unknown): void {
  if (document.paths[path] === undefined) return;
  const validate = validatorFor(path, status);
  if (validate === undefined)
    throw new Error(`Contract: POST ${path} answered ${status}, a status openapi.json does not document for it.`);
  if (!validate(body)) {
    const problems = (validate.errors ?? [])
      .slice(0, 5)
      .map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
    throw new Error(
      `Contract: POST ${path} ${status} does not match openapi.json:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(body).slice(0, 600)}`,
    );
  }
}
