/**
 * Which provider serves a model, and how Ask AI lays out its messages (docs/decisions.md §9). Pure rules, no I/O.
 */
import type { AiProvider } from '../db/ai-key-config';

export interface ModelRoute {
  provider: AiProvider;
  /** OpenAI's o1 / o3 / o4 families: the prompt goes into the user message, not a system message. */
  reasoning: boolean;
}

/** How providers are named in messages to the customer. */
export const PROVIDER_NAMES: Record<AiProvider, string> = {
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  gemini: 'Gemini',
};

/**
 * Model names are passed on to the provider (Gemini puts them in the request path), so they are limited to the
 * characters model names use. A family prefix needs something after its dash: `gpt-` alone names no model.
 */
const RULES: ReadonlyArray<{ pattern: RegExp; route: ModelRoute }> = [
  { pattern: /^gpt-[\w.:-]+$/, route: { provider: 'openai', reasoning: false } },
  { pattern: /^o[134](-[\w.:-]+)?$/, route: { provider: 'openai', reasoning: true } },
  { pattern: /^claude-[\w.:-]+$/, route: { provider: 'anthropic', reasoning: false } },
  { pattern: /^gemini-[\w.:-]+$/, route: { provider: 'gemini', reasoning: false } },
];

/** Every model name some rule routes, as one pattern (the document states it for `model`). */
export const MODEL_PATTERN = new RegExp(`^(${RULES.map((rule) => rule.pattern.source.slice(1, -1)).join('|')})$`);

export const UNKNOWN_MODEL_MESSAGE =
  'Unknown model: use an OpenAI (gpt-…, o1, o3, o4, o1-…, o3-…, o4-…), Anthropic (claude-…) or Gemini (gemini-…) model name.';

/** The provider of `model`, or undefined when no rule matches (the request is INVALID_ARGUMENT). Case-sensitive. */
export function routeModel(model: string): ModelRoute | undefined {
  return RULES.find((rule) => rule.pattern.test(model))?.route;
}

export interface ProviderMessages {
  /** The system instruction; absent for reasoning models. */
  system?: string;
  /** The one user message. */
  user: string;
}

/**
 * Reasoning models get the prompt and the text in one user message (prompt, a blank line, the text); every other
 * model gets the prompt as the system instruction and the text as the user message.
 */
export function providerMessages(route: ModelRoute, prompt: string, text: string): ProviderMessages {
  return route.reasoning ? { user: `${prompt}\n\n${text}` } : { system: prompt, user: text };
}
