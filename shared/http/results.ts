/**
 * Result schemas: what each operation answers, declared in its handler file next to its request schema
 * (`operation({ result })`). The handler's return value is checked against it at compile time, the OpenAPI
 * document (`npm run openapi`) describes `result` with it, and the test tiers validate every response they receive
 * against that document. Objects are closed: a field the schema does not name fails the contract check.
 */
import * as z from 'zod/mini';

type Schema = z.core.SomeType;

/** `{message}`: an operation that answers with its message only. */
export const messageOnly = () => z.object({ message: z.string() });

/** `{message, data}`. */
export const answer = <T extends Schema>(data: T) => z.object({ message: z.string(), data });

/** A page `{message, data: [...], nextPageToken?}` (the token only when there is a next page). */
export const pageWithNextPageToken = <T extends Schema>(item: T) =>
  z.object({ message: z.string(), data: z.array(item), nextPageToken: z.optional(z.string()) });

/** A page `{message, data: [...], pageToken?}`, for the operations whose contract names the token `pageToken`. */
export const pageWithPageToken = <T extends Schema>(item: T) =>
  z.object({ message: z.string(), data: z.array(item), pageToken: z.optional(z.string()) });

/** One item of a batch result: `{success, message}` and the fields `extra` names (docs/api-spec.md common rule 4). */
export const itemResult = <E extends z.core.$ZodLooseShape>(extra: E) =>
  z.object({ success: z.boolean(), message: z.string(), ...extra });

/** A batch result: `{message, data: {<item id>: item}}`. */
export const batchOf = <T extends Schema>(item: T) => answer(z.record(z.string(), item));

/** An operation's own `{result}` without the success envelope (Ask AI, Suggest Decision). */
export const ownResult = <T extends Schema>(result: T) => z.object({ result });

/** An open object, for data the client stored and gets back as it sent it (metadata, template data). */
export const clientObject = () => z.record(z.string(), z.unknown());
