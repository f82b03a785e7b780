/**
 * Schema pieces used by more than one operation; each operation's own request schema is in its handler file
 * (functions/<area>/<op>.ts exports `schema`), and a piece only one operation uses stays there too. The names say
 * what a piece allows: `maybeEmptyText` / `nonEmptyText` / `trimmedNonEmptyText`, `listOf` / `nonEmptyListOf` /
 * `nonEmptyUniqueListOf`.
 *
 * Handlers use `zod/mini` (`import * as z from 'zod/mini'`): the classic build adds ~420 KB to every bundle, mini
 * ~15 KB. Import the namespace in each file rather than re-exporting it from here: a re-exported namespace object
 * defeats tree-shaking and brings the whole library back.
 * Messages come from zod's English locale, configured once here (the middleware imports this module).
 */
import * as z from 'zod/mini';
import { en } from 'zod/locales';
import { CRDT_TYPES } from '../db/crdt';
import { VERSION_KINDS } from '../db/crdt-versions';
import { ACCESS_TYPES } from '../db/organization';
import { WRITE_FORMATS } from '../domain/crdt/format-rules';
import { clientObject } from './results';

z.config(en());
// A missing field reads "Required." rather than "expected string, received undefined".
z.config({
  customError: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'Required.' : undefined),
});

// Control characters (C0, DEL, C1) are what an id may not contain (docs/decisions.md §1).
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/** No control character anywhere: the pattern the document shows for ids. */
const WITHOUT_CONTROL_CHARACTERS = new RegExp(`^[^${CONTROL_CHARACTERS.source.slice(1, -1)}]*$`);

/** A client id: 1 to 256 characters without control characters (a pattern, so the document states it too). */
export const clientId = () =>
  z
    .string()
    .check(
      z.minLength(1, 'Must not be empty.'),
      z.maxLength(256, 'Must be at most 256 characters.'),
      z.regex(WITHOUT_CONTROL_CHARACTERS, 'Must not contain control characters.'),
    );

/** Text of 1 to `max` characters, taken as sent (spaces count). */
export const nonEmptyText = (max: number) =>
  z.string().check(z.minLength(1, 'Must not be empty.'), z.maxLength(max, `Must be at most ${max} characters.`));

/** A list of 0 to `max` items (docs/decisions.md §1: 30 where the spec says so, 100 otherwise). */
export const listOf = <T extends z.core.SomeType>(item: T, max = 100) =>
  z.array(item).check(z.maxLength(max, `Must have at most ${max} items.`));

/** `pageSize`: an integer from 1 to `max`; `byDefault` (the listing's page size) when not given. */
export const pageSize = (max = 1000, byDefault = max) =>
  z._default(z.int().check(z.minimum(1, 'Must be at least 1.'), z.maximum(max, `Must be at most ${max}.`)), byDefault);

/** An opaque page token as returned by a previous page. */
export const pageToken = () => z.string().check(z.minLength(1, 'Must not be empty.'), z.maxLength(8192, 'Too long.'));

/** Text trimmed of surrounding whitespace, then 1 to `max` characters (names, a search query). */
export const trimmedNonEmptyText = (max: number) =>
  documentedRules(
    z
      .string()
      .check(z.trim(), z.minLength(1, 'Must not be empty.'), z.maxLength(max, `Must be at most ${max} characters.`)),
    {
      // Not only whitespace (what trim() removes is what \s matches).
      pattern: '\\S',
    },
  );

/** An email address, trimmed and lower-cased (docs/decisions.md §3). */
export const emailAddress = () =>
  z
    .string()
    .check(
      z.trim(),
      z.toLowerCase(),
      z.maxLength(254, 'Must be at most 254 characters.'),
      z.regex(z.regexes.email, 'Must be a valid email address.'),
    );

// An http(s) URL as the document states it: scheme, a host name whose last label starts with a letter (a last label
// of digits would be read as an IPv4 number) or a dotted IPv4 address without leading zeros, a port up to 65535, then
// anything without whitespace. Every string it matches parses as a URL (test/unit/openapi-rules.test.ts), so the
// pattern is the whole rule.
const IPV4_PART = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const PORT = '(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})';
const HTTP_URL = new RegExp(
  `^[Hh][Tt][Tt][Pp][Ss]?://(([A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*|${IPV4_PART}(\\.${IPV4_PART}){3})(:${PORT})?([/?#]\\S*)?$`,
);

/** An absolute http(s) URL of at most `max` characters (HTTP_URL: no user info, no IPv6 literal, no whitespace). */
export const httpUrl = (max: number) =>
  z.string().check(
    z.maxLength(max, `Must be at most ${max} characters.`),
    z.regex(
      HTTP_URL,
      'Must be an http(s) URL: http:// or https://, a host name or IPv4 address, an optional port, no whitespace.',
    ),
    z.refine((value) => URL.canParse(value), 'Must be an http(s) URL.'),
  );

/**
 * Refuses a list in which two items share the id `pick` returns (docs/decisions.md §1: duplicate ids are INVALID_ARGUMENT);
 * items without an id (`pick` returns undefined, the server assigns one) are not compared. `what` names the id with
 * its article, as the message says it: `Must not repeat ${what}.` (`a userId`, `an id`).
 */
export const noDuplicateIds = <T>(pick: (item: T) => string | number | undefined, what: string) =>
  z.refine<T[]>((items) => {
    const ids = items.map(pick).filter((id) => id !== undefined);
    return new Set(ids).size === ids.length;
  }, `Must not repeat ${what}.`);

/** An access role: `viewer` or `editor`. */
export const accessRole = () => z.enum(['viewer', 'editor']);

/** A user object of Add Users / Update Users. */
export const userInput = () =>
  z.object({
    userId: clientId(),
    name: z.optional(z.string().check(z.maxLength(256, 'Must be at most 256 characters.'))),
    email: z.optional(z.string().check(z.maxLength(320, 'Must be at most 320 characters.'))),
    initial: z.optional(z.string().check(z.maxLength(16, 'Must be at most 16 characters.'))),
    accessRole: z.optional(accessRole()),
  });

/** A level: documentId or folderId (not both) inside organizationId. */
export const levelFields = {
  organizationId: clientId(),
  documentId: z.optional(clientId()),
  folderId: z.optional(clientId()),
};

/** Refuses a request naming both a document and a folder (docs/decisions.md §4); naming neither is allowed. */
export const notBothDocumentAndFolder = () =>
  z.refine<{ documentId?: string; folderId?: string }>(
    (data) => data.documentId === undefined || data.folderId === undefined,
    { message: 'Provide documentId or folderId, not both.', path: ['documentId'] },
  );

/**
 * JSON Schema's `required: keys`, with the keys named under `properties` too (Redocly's
 * no-required-schema-properties-undefined wants every required key declared where it is required).
 */
export const requires = (...keys: string[]) => ({
  properties: Object.fromEntries(keys.map((key) => [key, {}])),
  required: keys,
});

/**
 * The organization of a permission resource as the document states what shared/domain/permissions.ts checks: a
 * document or folder names its organization, an organization does not (it is its own; the server also takes an
 * organizationId equal to the id, which JSON Schema cannot compare).
 */
export const RESOURCE_ORGANIZATION_RULE = {
  if: { properties: { type: { const: 'organization' } }, required: ['type'] },
  then: { not: requires('organizationId') },
  else: requires('organizationId'),
};

/** notBothDocumentAndFolder as the document states it. */
export const NOT_BOTH_DOCUMENT_AND_FOLDER = { not: requires('documentId', 'folderId') };

/** Get Users' rule as the document states it: `allDocuments: true` comes with neither documentId nor folderId. */
export const ALL_DOCUMENTS_ALONE = {
  if: { properties: { allDocuments: { const: true } }, required: ['allDocuments'] },
  then: {
    not: {
      anyOf: [
        { properties: { documentId: {} }, required: ['documentId'] },
        { properties: { folderId: {} }, required: ['folderId'] },
      ],
    },
  },
};

/** Get Users' rule as the document states it: `groupByDocumentId: true` only with `allDocuments: true`. */
export const GROUP_BY_DOCUMENT_NEEDS_ALL_DOCUMENTS = {
  if: { properties: { groupByDocumentId: { const: true } }, required: ['groupByDocumentId'] },
  then: { properties: { allDocuments: { const: true } }, required: ['allDocuments'] },
};

/**
 * `schema` refusing a value in which none of `keys` is given (an update that would change nothing, a filter that
 * selects nothing), with `message` at `path`; the document says `anyOf: [{required: [key]}, ...]`, so a key the
 * schema does not know (dropped by the server) does not count.
 */
export const atLeastOneOf = <T extends z.ZodMiniObject>(
  schema: T,
  keys: ReadonlyArray<keyof z.core.output<T> & string>,
  message: string,
  path?: string[],
) =>
  documentedRules(
    schema.check(
      z.refine((value: Record<string, unknown>) => keys.some((key) => value[key] !== undefined), { message, path }),
    ),
    { anyOf: keys.map((key) => requires(key)) },
  );

const MAX_JSON_BYTES = 64 * 1024;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * An object whose keys the client chooses, each entry validated, returned exactly as the client sent it. z.record
 * rebuilds the object by assignment, which turns a `__proto__` key into the new object's prototype and so loses
 * it; free-form objects must keep every key name (docs/decisions.md §1 "Well-formed input").
 */
export const clientRecord = <V extends z.ZodMiniType>(keySchema: z.ZodMiniType<string>, valueSchema: V) =>
  z.custom<Record<string, z.output<V>>>(isObject, 'Must be an object.').check(
    z.superRefine((value, context) => {
      for (const [name, entry] of Object.entries(value)) {
        const keyCheck = keySchema.safeParse(name);
        if (!keyCheck.success) {
          for (const issue of keyCheck.error.issues)
            context.issues.push({ code: 'custom', message: `Key: ${issue.message}`, input: name, path: [name] });
        }
        const valueCheck = valueSchema.safeParse(entry);
        if (!valueCheck.success) {
          for (const issue of valueCheck.error.issues)
            context.issues.push({ code: 'custom', message: issue.message, input: entry, path: [name, ...issue.path] });
        }
      }
    }),
  );

/** Why a declared number is refused: DynamoDB cannot store it exactly (docs/decisions.md §1 "Well-formed input"). */
const NUMBER_RULE = 'Must be 0 or between 1e-100 and 9007199254740991 in size.';

/**
 * A number DynamoDB stores exactly: 0, or 1e-100 to 2^53-1 in size (a larger one would fail the write, as a 500).
 * For number fields stored as numbers; free-form JSON is stored as a JSON string (shared/db/json-attribute.ts) or
 * as Yjs content, which hold any JSON number, so jsonObject and the CRDT `data` have no such rule.
 */
export const storableNumber = () =>
  documentedRules(
    z
      .number()
      .check(
        z.refine((n) => n === 0 || (Math.abs(n) >= 1e-100 && Math.abs(n) <= Number.MAX_SAFE_INTEGER), NUMBER_RULE),
      ),
    {
      minimum: -Number.MAX_SAFE_INTEGER,
      maximum: Number.MAX_SAFE_INTEGER,
      not: { exclusiveMinimum: -1e-100, exclusiveMaximum: 1e-100, not: { const: 0 } },
      description: NUMBER_RULE,
    },
  );

/**
 * A free-form JSON object, at most `maxBytes` serialised (64 KB by default: several fit in one 400 KB item). Any
 * key names, `constructor`, `__proto__` and `prototype` included; kept exactly as sent. z.custom would show as an
 * unconstrained value in the document: it says `type: object`.
 */
export const jsonObject = (maxBytes = MAX_JSON_BYTES) =>
  documentedRules(
    z
      .custom<Record<string, unknown>>(isObject, 'Must be an object.')
      .check(
        z.refine(
          (value) => Buffer.byteLength(JSON.stringify(value)) <= maxBytes,
          `Must be at most ${maxBytes / 1024} KB as JSON.`,
        ),
      ),
    { type: 'object', description: `At most ${maxBytes / 1024} KB as JSON.` },
  );

/** A user as operations name one: an id with an optional name and email (notification recipients, actors). */
export const userReference = () =>
  z.object({
    userId: clientId(),
    name: z.optional(z.string().check(z.maxLength(256, 'Must be at most 256 characters.'))),
    email: z.optional(z.string().check(z.maxLength(320, 'Must be at most 320 characters.'))),
  });

/** Text of at most `max` characters; `""` allowed. */
export const maybeEmptyText = (max: number) => z.string().check(z.maxLength(max, `Must be at most ${max} characters.`));

/** A list of 1 to `max` items (docs/decisions.md §1); an empty list never means what a caller wants. */
export const nonEmptyListOf = <T extends z.core.SomeType>(item: T, max = 100) =>
  listOf(item, max).check(z.minLength(1, 'Must have at least one item.'));

/** A list of `min` to `max` client ids, none repeated (docs/decisions.md §1); the document says `uniqueItems`. */
export const uniqueIds = (what: string, { min = 0, max = 100 }: { min?: number; max?: number } = {}) => {
  const list = min > 0 ? nonEmptyListOf(clientId(), max) : listOf(clientId(), max);
  return documentedRules(list.check(noDuplicateIds((id: string) => id, what)), { uniqueItems: true });
};

/** A list of 1 to `max` client ids, none repeated (docs/decisions.md §1: duplicate ids are INVALID_ARGUMENT). */
export const nonEmptyUniqueIds = (what: string, max = 100) => uniqueIds(what, { min: 1, max });

/**
 * A list of `min` to `max` objects, no two sharing the id field `key` (items without it, where it is optional,
 * are not compared). JSON Schema cannot say "unique by a property", so the document carries the extension
 * `x-uniqueItemsBy: <key>`, with `uniqueItems` when the key is required (equal items would share it); the contract
 * test's generator reads the extension (test/support/schema-arbitrary.ts).
 */
export const uniqueListOf = <T extends z.ZodMiniObject>(
  item: T,
  key: keyof z.core.output<T> & string,
  what: string,
  { min = 0, max = 100 }: { min?: number; max?: number } = {},
) => {
  const list = min > 0 ? nonEmptyListOf(item, max) : listOf(item, max);
  const keyRequired = item._zod.def.shape[key]?._zod.optin !== 'optional';
  return documentedRules(
    list.check(noDuplicateIds((value: z.core.output<T>) => value[key] as string | number | undefined, what)),
    {
      ...(keyRequired ? { uniqueItems: true } : {}),
      'x-uniqueItemsBy': key,
      description: `No two items share the same ${key}${keyRequired ? '' : ' (items without one are not compared)'}.`,
    },
  );
};

/** A batch: a list of 1 to `max` items, none repeating the id field `key` (results are keyed by it). */
export const nonEmptyUniqueListOf = <T extends z.ZodMiniObject>(
  item: T,
  key: keyof z.core.output<T> & string,
  what: string,
  max = 100,
) => uniqueListOf(item, key, what, { min: 1, max });

/** Triggers switched on or off by name (activity and email config): at most 100, each name 1 to 200 characters. */
export const triggerMap = () =>
  z
    .record(nonEmptyText(200), z.boolean())
    .check(z.refine((value) => Object.keys(value).length <= 100, 'Must have at most 100 triggers.'));

// Fields of several operations of one area: functions, so that a bundle without those operations leaves them out.

/** A document of Add Documents and Update Documents; its name is up to 1000 characters, and `""` clears it. */
export const documentFields = () => ({
  documentId: clientId(),
  documentName: z.optional(maybeEmptyText(1000)),
  folderId: z.optional(clientId()),
  accessType: z.optional(z.enum(ACCESS_TYPES)),
});

/** The content fields a notification can be added or updated with. */
export const notificationContent = () => ({
  actionUser: z.optional(userReference()),
  displayHeadlineMessageTemplate: z.optional(maybeEmptyText(5000)),
  displayHeadlineMessageTemplateData: z.optional(jsonObject()),
  displayBodyMessage: z.optional(maybeEmptyText(20000)),
  notificationSourceData: z.optional(jsonObject()),
});

/**
 * The fields of Add and Update CRDT Data. `editorId`, `type` and `data` are optional here so that their absence
 * gets the contract's exact messages (checkEditorId, checkContent in shared/domain/crdt/input-rules.ts) rather
 * than a validation summary.
 */
export const crdtFields = () => ({
  organizationId: clientId(),
  documentId: clientId(),
  editorId: z.optional(z.union([z.literal(''), clientId()])),
  type: z.optional(z.enum(CRDT_TYPES)),
  data: z.optional(z.unknown()),
  contentKey: z.optional(clientId()),
  userId: z.optional(clientId()),
  /** xml editors: `content` as ProseMirror JSON (an object), HTML or Markdown (strings), in place of `data` (decisions §15). */
  format: z.optional(z.enum(WRITE_FORMATS)),
  content: z.optional(z.union([z.string(), clientObject()])),
});

/** The `data` each CRDT type takes (checkContent in shared/domain/crdt/input-rules.ts), as JSON Schema. */
const CRDT_DATA: Record<(typeof CRDT_TYPES)[number], { type: string }> = {
  text: { type: 'string' },
  map: { type: 'object' },
  array: { type: 'array' },
  xml: { type: 'string' },
};

/**
 * The rules of Add and Update CRDT Data that the domain checks (to answer the contract's own messages), as the
 * document states them: an editor id is not empty, and `data` is of the kind its `type` names.
 */
export const CRDT_CONTENT_RULES = [
  { properties: { editorId: { minLength: 1 } } },
  // Content in a format is for xml editors only, and comes with its format.
  { if: requires('format', 'type'), then: { properties: { type: { const: 'xml' } } } },
  { if: requires('content'), then: requires('format') },
  // HTML and Markdown are strings, ProseMirror JSON a document object (whose nodes the domain checks, as it parses XML).
  {
    if: { properties: { format: { enum: ['html', 'markdown'] } }, required: ['format'] },
    then: { properties: { content: { type: 'string' } } },
  },
  {
    if: { properties: { format: { const: 'prosemirror-json' } }, required: ['format'] },
    then: { properties: { content: { type: 'object', properties: { type: { const: 'doc' } }, required: ['type'] } } },
  },
  ...CRDT_TYPES.map((type) => ({
    if: { properties: { type: { const: type } }, required: ['type'] },
    then: { properties: { data: CRDT_DATA[type] } },
  })),
];

/**
 * States in the OpenAPI document a rule the server enforces beyond the fields' own schemas (a cross-field rule of
 * a refine, or one the domain checks to answer with the contract's own message), as JSON Schema keywords merged
 * into the request schema's node. Parsing is unchanged; the document stops accepting what the server refuses.
 */
export function documentedRules<T extends z.ZodMiniType>(schema: T, rules: z.core.GlobalMeta): T {
  // Rules stated on the same schema twice add up (an item's server rules and its if-then-else).
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), ...rules });
  return schema;
}

/**
 * A rule the server checks that JSON Schema cannot state: two values compared with each other, or a value compared
 * with the clock. The document carries each on the object whose properties it concerns, as the extension
 * `x-serverRules` (a list), with its words in the node's and the operation's description;
 * test/connected/contract-conformance.test.ts generates bodies that keep these rules, and bodies that break each.
 */
export type ServerRule =
  /** `property` must not equal `other` (both present). */
  | { rule: 'differs'; property: string; other: string; description: string }
  /** `property` (or, when it is absent, `defaultsTo`) must not be less than `other`. */
  | { rule: 'notBefore'; property: string; other: string; defaultsTo: 'now'; description: string }
  /** A time in the future, in `unit`s since the Unix epoch. */
  | { rule: 'future'; property: string; unit: 'seconds' | 'milliseconds'; description: string }
  /** A time at most `seconds` ago, in `unit`s since the Unix epoch. */
  | { rule: 'withinPast'; property: string; unit: 'seconds' | 'milliseconds'; seconds: number; description: string };

/** States `rules` on an object schema (the node of the properties they compare) for the document. */
export const withServerRules = <T extends z.ZodMiniType>(schema: T, rules: ServerRule[]): T =>
  documentedRules(schema, {
    description: rules.map((rule) => rule.description).join(' '),
    'x-serverRules': rules,
  });

/** An event type: `<group>.<action>` (`comment.add`, `message.attempt.exhausted`), at most 100 characters. */
export const eventType = () =>
  z
    .string()
    .check(
      z.maxLength(100, 'Must be at most 100 characters.'),
      z.regex(
        /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/,
        'Must be an event type <group>.<action> of letters, digits, _ and -.',
      ),
    );

/**
 * The fields of an advanced webhook endpoint that Create sets and Update changes (docs/decisions.md §11), each
 * as Create takes it; Update makes the optional ones nullable. Metadata is bounded as document metadata is.
 */
export const webhookEndpointFields = () => ({
  // Spelled out, not only parseable (httpUrl's pattern): a URL parser also takes `https:host` and drops tabs and
  // newlines, so the URL stored (and shown) would not be the one requested.
  url: httpUrl(2000),
  description: maybeEmptyText(1000),
  filterTypes: documentedRules(
    nonEmptyListOf(eventType()).check(noDuplicateIds((type: string) => type, 'an event type')),
    { uniqueItems: true },
  ),
  // Channels are organization ids.
  channels: nonEmptyUniqueIds('a channel'),
  disabled: z.boolean(),
  rateLimit: z.int().check(z.minimum(1, 'Must be a positive integer.')),
  // clientRecord is a custom schema, which the document would show as an unconstrained value: its rules are stated.
  metadata: documentedRules(
    clientRecord(nonEmptyText(128), maybeEmptyText(1000)).check(
      z.refine((value) => Object.keys(value).length <= 50, 'Must have at most 50 entries.'),
    ),
    {
      type: 'object',
      maxProperties: 50,
      propertyNames: { minLength: 1, maxLength: 128 },
      additionalProperties: { type: 'string', maxLength: 1000 },
    },
  ),
});

/** A version (decisions §14): its summary, never its state. */
export const versionResult = z.object({
  versionId: z.string(),
  editorId: z.string(),
  kind: z.enum(VERSION_KINDS),
  name: z.optional(z.string()),
  createdAt: z.number(),
  authors: z.array(z.string()),
  size: z.number(),
});
