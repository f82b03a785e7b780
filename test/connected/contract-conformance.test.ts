/**
 * The published contract is no looser than the server (issue #22, issue 31 item 7): for every operation, request
 * bodies generated from openapi.json's own request schema (each checked against the document by a JSON Schema
 * validator before it is sent, the nesting limit included) pass the server's validation. The rules JSON Schema
 * cannot state are in the document as extensions, which the generator (test/support/schema-arbitrary.ts) keeps:
 * `x-uniqueItemsBy` (no two items of a list share a key) and `x-serverRules` (two values compared, or a time compared
 * with the clock); each is also broken on purpose below, and the server must refuse that. A body the document allows
 * may still fail on what is stored (a page token, a stored editor's type) or on content that must parse; those
 * answers are listed below by message, and no others may be INVALID_ARGUMENT.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { routes, type Route } from '../../shared/routes';
import { invokeRoute } from '../support/invoke';
import { newTenant, type Tenant } from '../support/fixtures';
import { arbitraryFor, serverRulesHold, uniqueItemsKey, type JsonSchema } from '../support/schema-arbitrary';
import type { ServerRule } from '../../shared/http/schemas';
import { MAX_JSON_DEPTH } from '../../shared/http/middleware';

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
  // Add CRDT Data to an editor that exists: its type and content key are the ones it was created with.
  /^Type must be \w+, the type this editor was created with\.$/,
  /^contentKey must be .+, the key this editor was created with\.$/,
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

/** The schema of the whole body `{data}`: the nesting limit is stated there (the wrapper counts). */
const pointer = (path: string) =>
  `openapi.json#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema`;
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
    '%s: never INVALID_ARGUMENT and never a 5xx for a valid body',
    async (_, route) => {
      const validate = ajv.getSchema(pointer(route.path));
      if (validate === undefined) throw new Error(`No request schema for ${route.path}.`);
      const valid = arbitraryFor(requestSchema(route), { root: document, extraKeys: true }).filter(
        (data) => validate({ data }) === true,
      );
      const bodies = fc.sample(valid, { numRuns: BODIES_PER_ROUTE, seed: SEED });

      const answers = await Promise.all(
        bodies.map(async (data) => {
          const response = await invokeRoute(route.path, data, { headers: headersFor(route) });
          return { data, status: response.statusCode, error: response.body.error };
        }),
      );
      const failed = answers
        .filter(({ status }) => status >= 500)
        .map(({ data, error }) => ({ body: JSON.stringify(data).slice(0, 400), message: error?.message }));
      const refused = answers
        .filter(({ error }) => error?.status === 'INVALID_ARGUMENT' && !onlyWhatTheDocumentCannotSay(error))
        .map(({ data, error }) => ({
          body: JSON.stringify(data).slice(0, 400),
          message: error?.message,
          issues: JSON.stringify(error?.details?.issues ?? []).slice(0, 400),
        }));

      expect(bodies).toHaveLength(BODIES_PER_ROUTE);
      expect(refused).toEqual([]);
      expect(failed).toEqual([]);
    },
  );
});

/** A rule the document states by an extension: where it sits in `data` (property names, `*` for a list's items). */
interface StatedRule {
  at: string[];
  rule: ServerRule | { rule: 'uniqueItemsBy'; by: string | string[] };
}

/** Every rule of a request schema stated by `x-serverRules` or `x-uniqueItemsBy`, once each. */
function statedRules(schema: JsonSchema, at: string[] = []): StatedRule[] {
  const by = schema['x-uniqueItemsBy'];
  const rules: StatedRule[] = [
    ...(schema['x-serverRules'] ?? []).map((rule) => ({ at, rule })),
    ...(by === undefined ? [] : [{ at, rule: { rule: 'uniqueItemsBy' as const, by } }]),
    ...Object.entries(schema.properties ?? {}).flatMap(([name, child]) => statedRules(child, [...at, name])),
    ...(schema.items === undefined ? [] : statedRules(schema.items, [...at, '*'])),
    ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].flatMap((branch) =>
      statedRules(branch, at),
    ),
  ];
  return [...new Map(rules.map((rule) => [JSON.stringify(rule), rule])).values()];
}

const perSecond = (unit: 'seconds' | 'milliseconds') => (unit === 'seconds' ? 1 : 1000);

/** The values at `at` in `value` (every item of a list at `*`). */
function nodesAt(value: unknown, at: string[]): any[] {
  if (at.length === 0) return value !== null && typeof value === 'object' ? [value] : [];
  const [step, ...rest] = at;
  if (step === '*') return Array.isArray(value) ? value.flatMap((item) => nodesAt(item, rest)) : [];
  return value !== null && typeof value === 'object' ? nodesAt((value as Record<string, unknown>)[step], rest) : [];
}

/**
 * A copy of `data` that breaks `rule` where it sits (the first place that has something to break), or undefined
 * when this body has nothing there to break (an optional object left out, a list of fewer than two items).
 */
function breaking(data: unknown, { at, rule }: StatedRule, now: number): unknown {
  const copy = structuredClone(data);
  const names = rule.rule === 'uniqueItemsBy' ? (typeof rule.by === 'string' ? [rule.by] : rule.by) : [];
  const breakable = (candidate: any): boolean => {
    switch (rule.rule) {
      case 'uniqueItemsBy':
        return (
          Array.isArray(candidate) && candidate.length >= 2 && names.some((name) => candidate[0][name] !== undefined)
        );
      case 'differs':
        return candidate[rule.other] !== undefined;
      case 'notBefore':
        return typeof candidate[rule.other] === 'number' && candidate[rule.other] >= 1;
      default:
        return true;
    }
  };
  const node = nodesAt(copy, at).find(breakable);
  if (node === undefined) return undefined;
  switch (rule.rule) {
    case 'uniqueItemsBy': {
      for (const name of names) {
        if (node[0][name] === undefined) delete node[1][name];
        else node[1][name] = node[0][name];
      }
      return copy;
    }
    case 'differs':
      node[rule.property] = node[rule.other];
      return copy;
    case 'notBefore':
      node[rule.property] = node[rule.other] - 1;
      return copy;
    case 'future':
      node[rule.property] = (Math.floor(now / 1000) - 60) * perSecond(rule.unit);
      return copy;
    case 'withinPast':
      node[rule.property] = (Math.floor(now / 1000) - rule.seconds - 3600) * perSecond(rule.unit);
      return copy;
  }
}

/** Whether `data` breaks `rule` somewhere as the extension states it (the document's side of the check). */
function extensionRefuses(data: unknown, { at, rule }: StatedRule, now: number): boolean {
  return nodesAt(data, at).some((node) =>
    rule.rule === 'uniqueItemsBy'
      ? Array.isArray(node) &&
        new Set(node.map(uniqueItemsKey(rule.by)).filter((key) => typeof key === 'string')).size <
          node.filter((item) => typeof uniqueItemsKey(rule.by)(item) === 'string').length
      : !serverRulesHold(node, [rule], now),
  );
}

/** Every stated rule of every operation, with the operation. */
const STATED = routes.flatMap((route) =>
  statedRules(requestSchema(route)).map(
    (stated) => [route.path, stated.rule.rule, stated.at.join('.'), route, stated] as const,
  ),
);

describe('the rules the document states as extensions, broken one at a time', () => {
  /** Webhooks on, so that Recover reaches its rules (it answers FAILED_PRECONDITION first otherwise). */
  let ruleTenant: Tenant;
  beforeAll(async () => {
    ruleTenant = await newTenant();
    const enabled = await invokeRoute(
      '/v2/workspace/advancedwebhookconfig/update',
      { isEnabled: true },
      { headers: ruleTenant.apiKeyHeaders },
    );
    expect(enabled.statusCode).toBe(200);
  });

  it('are 23 rules in 17 operations: 19 lists unique by a key, 4 comparisons', () => {
    const operations = new Set(STATED.map(([path]) => path));
    const uniqueLists = STATED.filter(([, rule]) => rule === 'uniqueItemsBy');

    expect([STATED.length, operations.size, uniqueLists.length]).toEqual([23, 17, 19]);
  });

  it.each(STATED)('%s: %s at %s is refused by the server', async (path, _rule, _at, route, stated) => {
    const validate = ajv.getSchema(pointer(path));
    if (validate === undefined) throw new Error(`No request schema for ${path}.`);
    const now = Date.now();
    // Valid bodies first, then the rule broken in the first two that have something there to break.
    // Deep enough that the list the rule is on gets items (a comment's tagged users are five levels down in Add
    // Comment Annotations: below the default depth every list there would be empty, and no body could break it).
    const maxDepth = Math.max(4, stated.at.length + 1);
    const broken = arbitraryFor(requestSchema(route), { root: document, extraKeys: true, maxDepth })
      .filter((data) => validate({ data }) === true)
      .map((data) => breaking(data, stated, now))
      .filter((data) => data !== undefined);
    const bodies = fc.sample(broken, { numRuns: 2, seed: SEED });

    const answers = await Promise.all(
      bodies.map((data) => invokeRoute(path, data, { headers: ruleTenant.apiKeyHeaders })),
    );

    expect(bodies).toHaveLength(2);
    for (const data of bodies) expect(extensionRefuses(data, stated, now)).toBe(true);
    expect(answers.map((answer) => answer.body.error?.status)).toEqual(bodies.map(() => 'INVALID_ARGUMENT'));
    // For this rule, not another: a repeat named, or the property the rule is about.
    const because = stated.rule.rule === 'uniqueItemsBy' ? /Must not repeat/ : new RegExp(stated.rule.property);
    for (const answer of answers) expect(JSON.stringify(answer.body.error)).toMatch(because);
  });
});

describe('the nesting limit the document states (not NestedTooDeep on every body)', () => {
  /** An object and array chain `levels` deep under a key no request schema names. */
  const nestedUnder = (data: unknown, levels: number) => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i += 1) value = i % 2 === 0 ? [value] : { a: value };
    return { ...(data as object), nested: value };
  };
  // The body and `data` are two levels, so `levels` more reach MAX_JSON_DEPTH.
  const levels = MAX_JSON_DEPTH - 2;

  it.each(routes.map((route) => [route.path, route] as const))(
    '%s: the document and the server take the deepest body and refuse one level more',
    async (_, route) => {
      const validate = ajv.getSchema(pointer(route.path));
      if (validate === undefined) throw new Error(`No request schema for ${route.path}.`);
      const [data] = fc.sample(
        arbitraryFor(requestSchema(route), { root: document, extraKeys: true }).filter(
          (value) => validate({ data: value }) === true,
        ),
        { numRuns: 1, seed: SEED },
      );
      const deepest = nestedUnder(data, levels);
      const tooDeep = nestedUnder(data, levels + 1);

      const [taken, refused] = await Promise.all(
        [deepest, tooDeep].map((body) => invokeRoute(route.path, body, { headers: headersFor(route) })),
      );

      expect([validate({ data: deepest }), validate({ data: tooDeep })]).toEqual([true, false]);
      const takenError = taken.body.error;
      expect(
        takenError === undefined ||
          takenError.status !== 'INVALID_ARGUMENT' ||
          onlyWhatTheDocumentCannotSay(takenError),
      ).toBe(true);
      expect(refused.body.error?.message).toMatch(/JSON may nest at most 32 levels/);
    },
  );
});
