import { MODEL_PATTERN, UNKNOWN_MODEL_MESSAGE } from '../../shared/domain/ai-models';
import { askAi } from '../../shared/domain/ask-ai';
import { operation } from '../../shared/http/operation';
import { ownResult } from '../../shared/http/results';
import * as z from 'zod/mini';
import { documentedRules } from '../../shared/http/schemas';

/** docs/decisions.md §9. */
const MAX_TEXT_CHARS = 100_000;
/** An instruction, not a document: room for a detailed style guide, far below the text's limit. */
const MAX_PROMPT_CHARS = 10_000;

/** At most `max` characters as a person counts them (code points: an emoji is one, not two). */
const atMost = (max: number) => (value: string) => value.length <= max || [...value].length <= max;

/**
 * Text that is not only whitespace, of at most `max` code points. The document says the same: JSON Schema counts
 * `maxLength` in code points, and `\S` is what trim() leaves.
 */
const instruction = (max: number) =>
  documentedRules(
    z.string().check(
      z.refine((value) => value.trim() !== '', 'Must not be empty.'),
      z.refine(atMost(max), `Must be at most ${max} characters.`),
    ),
    { pattern: '\\S', maxLength: max },
  );

export const schema = z.object({
  model: z
    .string()
    .check(z.maxLength(100, 'Must be at most 100 characters.'), z.regex(MODEL_PATTERN, UNKNOWN_MODEL_MESSAGE)),
  prompt: instruction(MAX_PROMPT_CHARS),
  // Required and not empty: with nothing to process there is nothing to ask, and two of the providers refuse an
  // empty user message anyway.
  text: instruction(MAX_TEXT_CHARS),
});

/** Its own result, not the success envelope (docs/api-spec.md "Ask AI"): the answer, or the provider's failure. */
export const result = ownResult(
  z.union([
    z.object({ success: z.literal(true), text: z.string() }),
    z.object({ success: z.literal(false), error: z.string() }),
  ]),
);

export const handler = operation({
  auth: 'apiKey',
  schema,
  result,
  handle: async ({ data, caller }) => ({ result: await askAi(caller.apiKeyId, data) }),
});
