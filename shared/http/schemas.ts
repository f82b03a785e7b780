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
import { ACCESS_TYPES } from '../db/organization';

z.config(en());
// A missing field reads "Required." rather than "expected string, received undefined".
z.config({ customError: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'Required.' : undefined) });


// Control characters (C0, DEL, C1) are what an id may not contain (docs/decisions.md §1).
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/** A client id: 1 to 256 characters without control characters. */
export const clientId = () =>
  z.string().check(
    z.minLength(1, 'Must not be empty.'),
    z.maxLength(256, 'Must be at most 256 characters.'),
    z.refine((value) => !CONTROL_CHARACTERS.test(value), 'Must not contain control characters.'),
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
  z.string().check(z.trim(), z.minLength(1, 'Must not be empty.'), z.maxLength(max, `Must be at most ${max} characters.`));

/** An email address, trimmed and lower-cased (docs/decisions.md §3). */
export const emailAddress = () =>
  z.string().check(
    z.trim(),
    z.toLowerCase(),
    z.maxLength(254, 'Must be at most 254 characters.'),
    z.regex(z.regexes.email, 'Must be a valid email address.'),
  );

/** An absolute http(s) URL of at most `max` characters. */
export const httpUrl = (max: number) =>
  z.string().check(
    z.maxLength(max, `Must be at most ${max} characters.`),
    z.refine((value) => /^https?:$/.test(URL.canParse(value) ? new URL(value).protocol : ''), 'Must be an http(s) URL.'),
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
          for (const issue of keyCheck.error.issues) context.issues.push({ code: 'custom', message: `Key: ${issue.message}`, input: name, path: [name] });
        }
        const valueCheck = valueSchema.safeParse(entry);
        if (!valueCheck.success) {
          for (const issue of valueCheck.error.issues) context.issues.push({ code: 'custom', message: issue.message, input: entry, path: [name, ...issue.path] });
        }
      }
    }),
  );

/**
 * A free-form JSON object, at most `maxBytes` serialised (64 KB by default: several fit in one 400 KB item). Any
 * key names, `constructor`, `__proto__` and `prototype` included; kept exactly as sent.
 */
export const jsonObject = (maxBytes = MAX_JSON_BYTES) =>
  z.custom<Record<string, unknown>>(isObject, 'Must be an object.').check(
    z.refine((value) => Buffer.byteLength(JSON.stringify(value)) <= maxBytes, `Must be at most ${maxBytes / 1024} KB as JSON.`),
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

/** A list of 1 to `max` client ids, none repeated (docs/decisions.md §1: duplicate ids are INVALID_ARGUMENT). */
export const nonEmptyUniqueIds = (what: string, max = 100) =>
  nonEmptyListOf(clientId(), max).check(noDuplicateIds((id: string) => id, what));

/** A batch: a list of 1 to `max` items, none repeating the id `idOf` picks (results are keyed by that id). */
export const nonEmptyUniqueListOf = <T extends z.core.SomeType>(item: T, idOf: (value: z.core.output<T>) => string, what: string, max = 100) =>
  nonEmptyListOf(item, max).check(noDuplicateIds(idOf, what));

/** Triggers switched on or off by name (activity and email config): at most 100, each name 1 to 200 characters. */
export const triggerMap = () =>
  z.record(nonEmptyText(200), z.boolean()).check(
    z.refine((value) => Object.keys(value).length <= 100, 'Must have at most 100 triggers.'),
  );

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
});

/**
 * States in the OpenAPI document a rule the server enforces beyond the fields' own schemas (a cross-field rule of
 * a refine, or one the domain checks to answer with the contract's own message), as JSON Schema keywords merged
 * into the request schema's node. Parsing is unchanged; the document stops accepting what the server refuses.
 */
export function documentedRules<T extends z.ZodMiniType>(schema: T, rules: z.core.GlobalMeta): T {
  z.globalRegistry.add(schema, rules);
  return schema;
}

/** An event type: `<group>.<action>` (`comment.add`, `message.attempt.exhausted`), at most 100 characters. */
export const eventType = () =>
  z.string().check(
    z.maxLength(100, 'Must be at most 100 characters.'),
    z.regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/, 'Must be an event type <group>.<action> of letters, digits, _ and -.'),
  );

/**
 * The fields of an advanced webhook endpoint that Create sets and Update changes (docs/decisions.md §11), each
 * as Create takes it; Update makes the optional ones nullable. Metadata is bounded as document metadata is.
 */
export const webhookEndpointFields = () => ({
  // Spelled out, not only parseable: a URL parser also takes `https:host` and drops tabs and newlines, so the URL
  // stored (and shown) would not be the one requested.
  url: httpUrl(2000).check(z.regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\/\S+$/, 'Must start with http:// or https:// and contain no whitespace.')),
  description: maybeEmptyText(1000),
  filterTypes: nonEmptyListOf(eventType()).check(noDuplicateIds((type: string) => type, 'an event type')),
  // Channels are organization ids.
  channels: nonEmptyUniqueIds('a channel'),
  disabled: z.boolean(),
  rateLimit: z.int().check(z.minimum(1, 'Must be a positive integer.')),
  // clientRecord is a custom schema, which the document would show as an unconstrained value: its rules are stated.
  metadata: documentedRules(
    clientRecord(nonEmptyText(128), maybeEmptyText(1000)).check(z.refine((value) => Object.keys(value).length <= 50, 'Must have at most 50 entries.')),
    { type: 'object', maxProperties: 50, propertyNames: { minLength: 1, maxLength: 128 }, additionalProperties: { type: 'string', maxLength: 1000 } },
  ),
});
