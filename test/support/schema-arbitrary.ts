/**
 * Request bodies for the fuzz test: a fast-check arbitrary from an operation's JSON Schema (what the OpenAPI
 * document publishes, made by zod from the handler's schema), and mutations of those bodies the way careless
 * clients and attackers send them: wrong types, missing fields, deep nesting, huge strings, odd Unicode,
 * prototype key names.
 */
import fc from 'fast-check';
import type { ServerRule } from '../../shared/http/schemas';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  /**
   * (extension) No two items share the value of this property, or of all these properties (an item missing them all
   * is not compared; a missing one equals only a missing one).
   */
  'x-uniqueItemsBy'?: string | string[];
  /** (extension) Rules between properties of the object, or with the clock (shared/http/schemas.ts ServerRule). */
  'x-serverRules'?: ServerRule[];
  description?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  not?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minProperties?: number;
  maxProperties?: number;
  $ref?: string;
}

/** How far arbitraryFor honours a document beyond the plain keywords (the fuzz test uses none of these). */
export interface ArbitraryOptions {
  /** The document `$ref`s point into (`#/components/schemas/...`); unresolved references stand for any JSON. */
  root?: unknown;
  /** Objects also carry keys they do not declare (a request schema allows them; the server ignores them). */
  extraKeys?: boolean;
  /**
   * How deep lists and objects get items and keys (MAX_GENERATED_DEPTH when omitted); deeper, only what the schema
   * requires. A test that must reach a list nested deeper (a rule stated five levels down) asks for more.
   */
  maxDepth?: number;
}

interface Context extends ArbitraryOptions {
  depth: number;
}

/**
 * Ids from a small pool, so that generated requests meet each other's data (an add then an update of the same
 * document), plus now and then an id of the shapes the key encoding must survive.
 */
const ID_POOL = [
  'org-1',
  'org-2',
  'doc-1',
  'doc-2',
  'u1',
  'u2',
  'g1',
  'folder-1',
  'editor-1',
  'a#b',
  'x|y',
  'USER#z',
  '%41',
];

/** Strings a text field may legally hold that still trip careless code. */
const ODD_TEXT = [
  '',
  ' ',
  'é',
  '𝒳',
  '👩‍👩‍👧',
  'ع',
  '\u200b',
  'a\u0301',
  '0',
  'null',
  '{{name}}',
  '<b>x</b>',
  '../..',
  "'; --",
];

/** Any JSON value, a few levels deep. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

/**
 * What an unconstrained schema (`{}`) stands for: zod writes free-form objects (z.custom) and z.unknown that way,
 * and most of them are objects.
 */
const freeForm: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }), weight: 3 },
  { arbitrary: anyJson, weight: 1 },
);

function boundedString(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, 40);
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern, 'u');
    const fitting = (value: string) => value.length >= minLength && value.length <= (schema.maxLength ?? Infinity);
    // Pool ids and odd text first where the pattern allows them (ids are patterned), then strings made to match.
    const pooled = [...ID_POOL, ...ODD_TEXT].filter((value) => pattern.test(value) && fitting(value));
    const matching = fc.stringMatching(pattern).filter(fitting);
    return pooled.length === 0 ? matching : fc.oneof(fc.constantFrom(...pooled), matching);
  }
  const text = fc.oneof(
    fc.constantFrom(...ID_POOL, ...ODD_TEXT),
    fc.string({ minLength, maxLength }),
    fc.string({ unit: 'grapheme', minLength, maxLength }),
  );
  return text.filter((value) => value.length >= minLength && value.length <= (schema.maxLength ?? Infinity));
}

/** `#/a/b` in the root document, or undefined. */
function resolve(ref: string, root: unknown): JsonSchema | undefined {
  if (!ref.startsWith('#/') || root === undefined) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/'))
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  return node as JsonSchema | undefined;
}

/** One schema with the keywords of both (a branch of anyOf/oneOf/allOf applied to its base): properties merged, required joined. */
function merge(base: JsonSchema, branch: JsonSchema): JsonSchema {
  const properties: Record<string, JsonSchema> = { ...base.properties };
  for (const [name, property] of Object.entries(branch.properties ?? {})) {
    properties[name] =
      name in properties && Object.keys(property).length > 0
        ? { ...properties[name], ...property }
        : (properties[name] ?? property);
  }
  const required = [...new Set([...(base.required ?? []), ...(branch.required ?? [])])];
  // A branch's `not: {required: [...]}` says which fields must stay out: leave them out of the merged schema.
  const excluded = new Set([
    ...(branch.not?.required ?? []),
    ...(branch.not?.anyOf ?? []).flatMap((choice) => choice.required ?? []),
  ]);
  for (const name of excluded) delete properties[name];
  return { ...base, ...branch, properties, required: required.filter((name) => !excluded.has(name)), not: base.not };
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const isScalar = (schema: JsonSchema) =>
  schema.const !== undefined || schema.enum !== undefined || SCALAR_TYPES.has(String(schema.type));
/** Beyond this depth, choices keep to their scalar branches and lists and maps stay empty, so recursion ends. */
const MAX_GENERATED_DEPTH = 4;

/** Values the schema accepts, as far as a JSON Schema says (zod refinements may still refuse some). */
export function arbitraryFor(schema: JsonSchema | undefined, options: ArbitraryOptions = {}): fc.Arbitrary<unknown> {
  return generate(schema, { ...options, depth: 0 });
}

function generate(schema: JsonSchema | undefined, context: Context): fc.Arbitrary<unknown> {
  if (schema === undefined || Object.keys(schema).length === 0) return freeForm;
  if (schema.$ref !== undefined) {
    const target = resolve(schema.$ref, context.root);
    const { $ref: _ref, ...rest } = schema;
    return target === undefined
      ? freeForm
      : generate(Object.keys(rest).length === 0 ? target : merge(target, rest), context);
  }
  if (schema.allOf !== undefined) {
    const { allOf, ...rest } = schema;
    return generate(allOf.reduce(merge, rest), context);
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum);
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices !== undefined) {
    const { anyOf: _any, oneOf: _one, ...base } = schema;
    const deep =
      context.depth >= (context.maxDepth ?? MAX_GENERATED_DEPTH) && choices.some(isScalar)
        ? choices.filter(isScalar)
        : choices;
    const branches = Object.keys(base).length === 0 ? deep : deep.map((branch) => merge(base, branch));
    return fc.oneof(...branches.map((branch) => generate(branch, context)));
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const inner = { ...context, depth: context.depth + 1 };
  switch (type) {
    case 'string':
      return boundedString(schema);
    case 'integer':
      return fc.integer({
        min: schema.minimum ?? -1000,
        max: Math.min(schema.maximum ?? 100_000, Number.MAX_SAFE_INTEGER),
      });
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return arrayArbitrary(schema, inner);
    case 'object':
      return objectArbitrary(schema, inner);
    default:
      return anyJson;
  }
}

function arrayArbitrary(schema: JsonSchema, context: Context): fc.Arbitrary<unknown> {
  const minLength = schema.minItems ?? 0;
  const maxLength =
    context.depth > (context.maxDepth ?? MAX_GENERATED_DEPTH)
      ? minLength
      : Math.max(minLength, Math.min(schema.maxItems ?? 5, 5));
  if (maxLength === 0) return fc.constant([]);
  const item = generate(schema.items, context);
  const by = schema['x-uniqueItemsBy'];
  if (by !== undefined) return fc.uniqueArray(item, { minLength, maxLength, selector: uniqueItemsKey(by) });
  if (schema.uniqueItems)
    return fc.uniqueArray(item, { minLength, maxLength, selector: (value) => JSON.stringify(value) });
  return fc.array(item, { minLength, maxLength });
}

/**
 * What `x-uniqueItemsBy` compares items by: the JSON of the named properties' values (a missing one as null), or a
 * new object, never equal to another, for an item that has none of them.
 */
export function uniqueItemsKey(by: string | string[]): (item: unknown) => unknown {
  const names = typeof by === 'string' ? [by] : by;
  return (item) => {
    const record = (item ?? {}) as Record<string, unknown>;
    if (names.every((name) => record[name] === undefined)) return {};
    return JSON.stringify(names.map((name) => record[name] ?? null));
  };
}

/** A margin for the clock rules: long enough for a test's requests to reach the server, short against the rules. */
const CLOCK_MARGIN_SECONDS = 3600;

/**
 * `value` changed as little as needed to keep `rules` (shared/http/schemas.ts ServerRule), at `now` (ms): a time
 * moved into its window, a later time moved after the earlier one; `differs` is kept by filtering (serverRulesHold).
 */
export function keepingServerRules(value: unknown, rules: ServerRule[], now = Date.now()): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const record = { ...(value as Record<string, unknown>) };
  const perSecond = (unit: 'seconds' | 'milliseconds') => (unit === 'seconds' ? 1 : 1000);
  for (const rule of rules) {
    const current = record[rule.property];
    if (rule.rule === 'future' && typeof current === 'number') {
      const earliest = Math.floor(now / 1000 + CLOCK_MARGIN_SECONDS) * perSecond(rule.unit);
      if (current < earliest) record[rule.property] = earliest + (Math.abs(current) % 1_000_000);
    } else if (rule.rule === 'withinPast' && typeof current === 'number') {
      const window = (rule.seconds - 2 * CLOCK_MARGIN_SECONDS) * perSecond(rule.unit);
      const latest = Math.floor(now / 1000 - CLOCK_MARGIN_SECONDS) * perSecond(rule.unit);
      record[rule.property] = latest - (Math.abs(current) % window);
    } else if (rule.rule === 'notBefore' && typeof current === 'number') {
      const other = record[rule.other];
      if (typeof other === 'number' && current < other) record[rule.property] = other + (other - current);
    }
  }
  return record;
}

/** Whether `value` keeps `rules` at `now` (ms), as the server checks them. */
export function serverRulesHold(value: unknown, rules: ServerRule[], now = Date.now()): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return true;
  const record = value as Record<string, unknown>;
  const number = (name: string) => (typeof record[name] === 'number' ? (record[name] as number) : undefined);
  return rules.every((rule) => {
    const perSecond = rule.rule === 'future' || rule.rule === 'withinPast' ? (rule.unit === 'seconds' ? 1 : 1000) : 1;
    const current = number(rule.property);
    switch (rule.rule) {
      case 'differs':
        return record[rule.property] === undefined || record[rule.property] !== record[rule.other];
      case 'future':
        return current === undefined || current * (1000 / perSecond) > now;
      case 'withinPast':
        return current === undefined || current * (1000 / perSecond) >= now - rule.seconds * 1000;
      case 'notBefore': {
        const other = number(rule.other);
        return other === undefined || (current ?? now) >= other;
      }
    }
  });
}

function objectArbitrary(schema: JsonSchema, context: Context): fc.Arbitrary<unknown> {
  const rules = schema['x-serverRules'];
  const plain = plainObjectArbitrary(schema, context);
  if (rules === undefined) return plain;
  return plain.map((value) => keepingServerRules(value, rules)).filter((value) => serverRulesHold(value, rules));
}

function plainObjectArbitrary(schema: JsonSchema, context: Context): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  if (Object.keys(properties).length === 0 && schema.additionalProperties !== undefined) {
    const maxKeys =
      context.depth > (context.maxDepth ?? MAX_GENERATED_DEPTH) ? 0 : Math.min(schema.maxProperties ?? 4, 4);
    if (maxKeys === 0) return fc.constant({});
    const value =
      typeof schema.additionalProperties === 'object' ? generate(schema.additionalProperties, context) : anyJson;
    const key = schema.propertyNames === undefined ? fc.string({ maxLength: 12 }) : boundedString(schema.propertyNames);
    return fc.dictionary(key, value, { maxKeys, minKeys: schema.minProperties ?? 0, noNullPrototype: true });
  }
  const record = Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [name, generate(property, context)]),
  );
  const declared = fc.record(record, { requiredKeys: (schema.required ?? []).filter((name) => name in properties) });
  if (!context.extraKeys || schema.additionalProperties === false) return declared;
  // Keys the schema does not name, with any JSON: the document allows them and the server drops them.
  const extraKey = fc.string({ minLength: 1, maxLength: 8 }).filter((name) => !(name in properties));
  const extra = fc.dictionary(
    extraKey,
    fc.oneof({ arbitrary: anyJson, weight: 4 }, { arbitrary: deepJson, weight: 1 }),
    { maxKeys: 2, noNullPrototype: true },
  );
  return fc.tuple(declared, extra).map(([known, unknown]) => ({ ...unknown, ...known }));
}

/**
 * Objects and arrays nested 1 to 40 levels, for the keys a request does not name: the server refuses a body nested
 * over 32 levels (its wrapper included), so the document must say so and a generated body near the limit must pass.
 */
const deepJson: fc.Arbitrary<unknown> = fc
  .tuple(fc.integer({ min: 1, max: 40 }), fc.boolean())
  .map(([levels, arrayFirst]) => {
    let value: unknown = 1;
    for (let i = 0; i < levels; i += 1) value = (i % 2 === 0) === arrayFirst ? [value] : { a: value };
    return value;
  });

/** Every path (list of keys) to a value inside `value`, the root included. */
function pathsOf(value: unknown, prefix: string[] = []): string[][] {
  const paths = [prefix];
  if (value !== null && typeof value === 'object') {
    for (const [name, child] of Object.entries(value)) paths.push(...pathsOf(child, [...prefix, name]));
  }
  return paths;
}

/** A copy of `value` with the thing at `path` replaced by `replace(old)` (a new key is added when missing). */
function replaceAt(value: unknown, path: string[], replace: (old: unknown) => unknown): unknown {
  if (path.length === 0) return replace(value);
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((item, i) => (String(i) === head ? replaceAt(item, rest, replace) : item));
  const copy: Record<string, unknown> = {};
  const source = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  for (const [name, child] of Object.entries(source))
    defineOwn(copy, name, name === head ? replaceAt(child, rest, replace) : child);
  if (!(head in copy) || !Object.prototype.hasOwnProperty.call(copy, head))
    defineOwn(copy, head, replaceAt(undefined, rest, replace));
  return copy;
}

/** Sets an own property even for `__proto__`, which plain assignment would turn into the prototype. */
function defineOwn(target: Record<string, unknown>, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

function nest(levels: number, inner: unknown, kind: 'array' | 'object'): unknown {
  let value = inner;
  for (let i = 0; i < levels; i += 1) value = kind === 'array' ? [value] : { a: value };
  return value;
}

/** How a mutation changes the value at a path. */
const replacements: Array<fc.Arbitrary<(old: unknown) => unknown>> = [
  // Wrong types.
  fc
    .constantFrom<unknown>(
      0,
      -1,
      1.5,
      2 ** 53,
      1e-200,
      1e300,
      true,
      null,
      '',
      'x',
      [],
      [1, 'a'],
      {},
      { nested: { deeper: true } },
    )
    .map((value) => () => value),
  // Huge strings: past every field limit, and past the body limit.
  fc.constantFrom(10_000, 300_000, 1_100_000).map((size) => () => 'x'.repeat(size)),
  // Odd Unicode.
  fc
    .constantFrom('\u0000', '\ud800', '\udfff', 'a\ud83d', '\ufeff', '\u202e', '𝒳'.repeat(300), '\u0007', '%00')
    .map((text) => () => text),
  // Deep nesting.
  fc.tuple(fc.constantFrom(31, 40, 200), fc.constantFrom<'array' | 'object'>('array', 'object')).map(
    ([levels, kind]) =>
      () =>
        nest(levels, 1, kind),
  ),
  // Prototype key names.
  fc
    .constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty')
    .map((name) => (old: unknown) => {
      const copy: Record<string, unknown> =
        old !== null && typeof old === 'object' && !Array.isArray(old) ? { ...old } : {};
      defineOwn(copy, name, { polluted: true });
      return copy;
    }),
  // Missing: the field is dropped.
  fc.constant(() => undefined),
];

/** `body`, then with one to three mutations at random paths (of the data, never replacing the whole of it). */
export function mutated(body: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return body.chain((valid) => {
    const paths = pathsOf(valid).filter((path) => path.length > 0);
    if (paths.length === 0) return fc.constant(valid);
    const mutation = fc.tuple(fc.constantFrom(...paths), fc.oneof(...replacements));
    return fc
      .array(mutation, { minLength: 1, maxLength: 3 })
      .map((mutations) =>
        mutations.reduce<unknown>((current, [path, replace]) => replaceAt(current, path, replace), valid),
      );
  });
}
