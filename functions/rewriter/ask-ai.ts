import { UNKNOWN_MODEL_MESSAGE, routeModel } from '../../shared/domain/ai-models';
import { askAi } from '../../shared/domain/ask-ai';
import { operation } from '../../shared/http/operation';
import * as z from 'zod/mini';

/** docs/decisions.md §9. */
const MAX_TEXT_CHARS = 100_000;
/** An instruction, not a document: room for a detailed style guide, far below the text's limit. */
const MAX_PROMPT_CHARS = 10_000;

/** At most `max` characters as a person counts them (code points: an emoji is one, not two). */
const atMost = (max: number) => (value: string) => value.length <= max || [...value].length <= max;

export const schema = z.object({
  model: z.string().check(
    z.maxLength(100, 'Must be at most 100 characters.'),
    z.refine((model) => routeModel(model) !== undefined, UNKNOWN_MODEL_MESSAGE),
  ),
  prompt: z.string().check(
    z.refine((prompt) => prompt.trim() !== '', 'Must not be empty.'),
    z.refine(atMost(MAX_PROMPT_CHARS), `Must be at most ${MAX_PROMPT_CHARS} characters.`),
  ),
  // Required and not empty: with nothing to process there is nothing to ask, and two of the providers refuse an
  // empty user message anyway.
  text: z.string().check(
    z.refine((text) => text.trim() !== '', 'Must not be empty.'),
    z.refine(atMost(MAX_TEXT_CHARS), `Must be at most ${MAX_TEXT_CHARS} characters.`),
  ),
});

/** The result's own shape (docs/decisions.md §1), for the OpenAPI document; the handler's return is checked against it. */
export const resultSchema = z.union([
  z.object({ success: z.literal(true), text: z.string() }),
  z.object({ success: z.literal(false), error: z.string() }),
]);

export const handler = operation({
  auth: 'apiKey',
  schema,
  handle: async ({ data, caller }) => {
    const result: z.output<typeof resultSchema> = await askAi(caller.apiKeyId, data);
    return { result };
  },
});
